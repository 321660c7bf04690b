"""Task files that lie, replayed against every file tool of the researcher and against the expert's sandbox.

An attachment named like a CSV may be a link to a file outside the task's folder, a FIFO that blocks whoever opens it,
or a sparse file that claims 2 GB. Each must be refused before any byte of it is read, with the reason; the sandbox must
run without it and say why. Every call here is bounded in time (a thread with a deadline, a child with a timeout).
"""
import contextvars, os, threading
from pathlib import Path
import pytest
from gaia_mas.gaia.tools.sandbox import sandbox_mode
from gaia_mas.gaia.tools.expert_tools import python_repl_tool, python_session
from gaia_mas.gaia.tools.file_tools import attachment_scope, get_file_tools, read_attachment, text_file_tool

pytestmark = pytest.mark.security
CANARY = "outside-the-task-canary-5d1e"


@pytest.fixture
def task(tmp_path):
    "A task's folder, beside a file that is not the task's."
    (tmp_path/"secret.txt").write_text(f"id,value\n1,{CANARY}\n")
    (tmp_path/"task").mkdir()
    return tmp_path/"task"


def every_tool(path:Path, seconds:float=60) -> dict:
    "What each file tool says about the attachment `path`, asked by name and by full path, within its research step."
    out, ctx = {}, contextvars.copy_context()
    def ask_all():
        with attachment_scope({"file": str(path)}):
            for t in get_file_tools():
                for asked in (path.name, str(path)): out[t.name, asked] = str(t.invoke({"file_path": asked}))
    worker = threading.Thread(target=ctx.run, args=(ask_all,), daemon=True)
    worker.start(); worker.join(seconds)
    assert not worker.is_alive(), f"a file tool still blocks on {path.name} after {seconds} s; answered: {sorted(out)}"
    return out


def sandbox_view(path:Path) -> tuple[list, str]:
    "The files the expert's sandbox binds for the attachment, and what the code sees when it opens it."
    with python_session({"file": str(path)}) as s:
        return s.files, python_repl_tool.invoke(f"print(open({str(path)!r}).read()[:100])")


def test_link_out_of_the_task_folder_is_refused_by_every_tool(task):
    (task/"data.csv").symlink_to(task.parent/"secret.txt")
    for (tool, asked), said in every_tool(task/"data.csv").items():
        assert said.startswith("Error: Refused: data.csv is a link to a file outside the task's folder"), (tool, asked, said)
        assert CANARY not in said


@pytest.mark.subprocess
def test_link_out_of_the_task_folder_is_not_mounted_in_the_sandbox(task):
    (task/"data.csv").symlink_to(task.parent/"secret.txt")
    files, seen = sandbox_view(task/"data.csv")
    assert files == [] and seen.startswith("Note: data.csv is not readable here: data.csv is a link to a file outside")
    if sandbox_mode() == "bwrap": assert CANARY not in seen and "FileNotFoundError" in seen


@pytest.mark.subprocess
def test_a_link_to_a_file_beside_it_still_reads(task):
    (task/"real.csv").write_text("id,value\n1,kept\n"); (task/"data.csv").symlink_to(task/"real.csv")
    said = every_tool(task/"data.csv")
    assert "kept" in said["text_file_tool", "data.csv"] and "kept" in said["read_attachment", str(task/"data.csv")]
    files, seen = sandbox_view(task/"data.csv")
    assert str(task/"data.csv") in files and "kept" in seen


@pytest.mark.subprocess
def test_fifo_attachment_is_refused_without_blocking(task):
    fifo = task/"data.csv"; os.mkfifo(fifo)
    try:
        for (tool, asked), said in every_tool(fifo).items():
            assert said.startswith("Error: Refused: data.csv is a FIFO (named pipe), not a regular file"), (tool, said)
        files, seen = sandbox_view(fifo)
        assert files == [] and seen.startswith("Note: data.csv is not readable here: data.csv is a FIFO")
    finally:  # release any reader still waiting on the pipe
        try: os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError: pass


@pytest.mark.subprocess
def test_sparse_attachment_is_refused_before_reading(task):
    "2 GB that take no disk: refused from its size, not read into memory and then found binary."
    with open(task/"scan.txt", "wb") as f: f.truncate(2 * 2**30)
    for (tool, asked), said in every_tool(task/"scan.txt").items():
        assert said.startswith("Error: Refused: scan.txt is 2,048 MiB, over the limit of 100 MiB"), (tool, said)
        assert "GAIA_MAS_MAX_ATTACHMENT_MB" in said
    files, seen = sandbox_view(task/"scan.txt")
    assert files == [] and "over the limit of 100 MiB" in seen


def test_binary_detection_reads_only_the_head(task):
    "A 90 MB binary file under the size limit is refused as binary once its first bytes are read, not all 90 MB."
    import tracemalloc
    with open(task/"data.bin", "wb") as f: f.truncate(90 * 2**20)
    with attachment_scope({"file": str(task/"data.bin")}):
        read_attachment.invoke({"file_path": "data.bin"})  # first call: imports and caches outside the measure
        tracemalloc.start()
        try: said = [t.invoke({"file_path": "data.bin"}) for t in (read_attachment, text_file_tool)]
        finally: peak = tracemalloc.get_traced_memory()[1]; tracemalloc.stop()
    assert all("looks like a binary file" in s for s in said), said
    assert peak < 30 * 2**20, f"{peak / 2**20:.0f} MB allocated"  # reading the whole file would allocate its 90 MB
