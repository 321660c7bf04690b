"""Office files are read with no network at all: unstructured must not download its spaCy model or phone home.

Each format is read in a child process whose network is really gone: a new, empty network namespace (`unshare -n`)
when the machine allows it, else a process in which every socket connection is refused."""
import json, shutil, subprocess, sys, textwrap
from pathlib import Path
import pytest

SAMPLES = Path(__file__).resolve().parents[2]/"nbs"/"samples"

NO_SOCKETS = """
import socket
def refuse(*a, **k): raise OSError("network disabled for this test")
socket.socket.connect = socket.socket.connect_ex = refuse
socket.getaddrinfo = socket.create_connection = refuse
"""

READ = """
import json, sys, time
from gaia_mas.gaia.tools.file_tools import unstructured_excel_tool, unstructured_powerpoint_tool, unstructured_word_tool
out = {}
for tool, name in [(unstructured_word_tool, "sample.docx"), (unstructured_powerpoint_tool, "sample.pptx"), (unstructured_excel_tool, "sample.xlsx")]:
    t = time.perf_counter(); text = tool.invoke({"file_path": f"{sys.argv[1]}/{name}"})
    out[name] = [text, time.perf_counter() - t]
print(json.dumps(out))
"""

def _offline_cmd() -> list[str]:
    "A command prefix that runs Python with no network."
    if shutil.which("unshare") and subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0:
        return ["unshare", "-n", sys.executable, "-c", READ]
    return [sys.executable, "-c", NO_SOCKETS + READ]

@pytest.mark.subprocess
def test_office_files_read_offline(tmp_path):
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path), "GAIA_MAS_ALLOWED_ROOTS": str(SAMPLES)}  # a fresh home: no caches, no opt-outs
    p = subprocess.run([*_offline_cmd(), str(SAMPLES)], capture_output=True, text=True, timeout=180,
                       env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    for name, (text, seconds) in out.items(): print(f"{name}: {seconds:.2f} s, {text[:60]!r}")
    assert "Harbour committee minutes" in out["sample.docx"][0] and "Paint\t900" in out["sample.docx"][0]
    assert "Speaker notes: Spring came second" in out["sample.pptx"][0]
    assert "Soup\tFood\t120.5" in out["sample.xlsx"][0]
    assert all(s < 60 for _, s in out.values()), "a read waited on the network"
    assert "download" not in p.stderr.lower()


def test_pdf_text_ends_lines_with_a_newline(tmp_path):
    "pdfium ends a text layer's lines with \\r\\n; pdf_text gives plain \\n lines under each page header."
    from gaia_mas.core.readers import pdf_text, write_text_pdf
    pdf = write_text_pdf(tmp_path/"notes.pdf", ["first line\n    indented second line\nthird line"])
    text = pdf_text(pdf)
    assert "\r" not in text and "first line\n" in text and text.endswith("third line"), repr(text)
