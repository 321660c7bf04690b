"""Clean stops: `gaia-mas serve` (one worker or two) and `gaia-mas rag ingest`, stopped with SIGTERM (as systemd and
Kubernetes stop a service) or SIGINT (Ctrl+C) sent to the command's own process, leave no process behind: not the
document parser's worker, not multiprocessing's resource tracker, not a uvicorn worker. Every process the command
spawned carries a tag in its environment, so the test finds them all, orphans reparented to pid 1 included."""
import signal, sys, time
import httpx, pytest

from gaia_mas.core.pg_server import free_port
from proc_tree import Tagged, describe

GAIA = [sys.executable, "-c", "import sys; from gaia_mas.cli import main; sys.exit(main())"]
ENV = {"OPIK_TRACK_DISABLE": "true", "OPENAI_API_KEY": ""}
DOC = b"# Bulkheads\n\n## Idea\n\nA bulkhead isolates each dependency's resources: one slow service cannot take all.\n"


def _parser_running(cmd:Tagged) -> bool:
    "Is the document parser's worker (a multiprocessing child) among the command's processes?"
    return any("multiprocessing" in " ".join(p.cmdline()) and "resource_tracker" not in " ".join(p.cmdline())
               for p in cmd.processes())


def _wait(cond, timeout:float, what:str) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end: raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def _serve(tmp_path, workers:int) -> tuple[Tagged, str]:
    "`gaia-mas serve` on a new SQLite knowledge base, with a parser worker started by one upload per worker."
    port = free_port()
    cmd = Tagged([*GAIA, "serve", "--provider", "scripted", "--port", str(port), "--workers", str(workers),
                  "--kb", f"sqlite:///{tmp_path}/kb.sqlite"], env={**ENV, "HOME": str(tmp_path)})
    url = f"http://127.0.0.1:{port}"
    def up():
        try: return httpx.get(f"{url}/health", timeout=5).status_code == 200
        except httpx.HTTPError: return cmd.proc.poll() is not None
    _wait(up, 120, "serve to answer")
    assert cmd.proc.poll() is None, cmd.proc.stdout.read()
    for i in range(2 * workers):  # new connections, so that both workers are likely to parse one
        r = httpx.post(f"{url}/kb/documents", files=[("files", (f"doc{i}.md", DOC))], headers={"Connection": "close"},
                       timeout=120)
        assert r.status_code == 201, r.text
    _wait(lambda: _parser_running(cmd), 30, "the parser worker")
    return cmd, url


@pytest.mark.process
@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_serve_leaves_no_process_behind(tmp_path, workers, sig):
    cmd, _ = _serve(tmp_path, workers)
    try:
        spawned = len(cmd.processes())
        code, left = cmd.stop(sig)
        assert code is not None, "serve did not exit"
        assert not left, f"{len(left)} of {spawned} processes are left after {sig.name}:\n{describe(left)}"
        assert not cmd.new_orphans(left)
    finally: cmd.kill_all()


@pytest.mark.subprocess
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_rag_ingest_leaves_no_process_behind(tmp_path, sig):
    docs = tmp_path/"docs"; docs.mkdir()
    # a hash-embedded note takes about 2 ms: 8,000 keep the ingest running well past the signal (400 ended first)
    for i in range(8000): (docs/f"note{i}.md").write_bytes(DOC.replace(b"Bulkheads", f"Note {i}".encode()))
    cmd = Tagged([*GAIA, "rag", "ingest", str(docs), "--kb", f"sqlite:///{tmp_path}/kb.sqlite", "--embeddings", "hash",
                  "--no-progress"], env={**ENV, "HOME": str(tmp_path)})
    try:
        _wait(lambda: _parser_running(cmd) or cmd.proc.poll() is not None, 120, "the parser worker")
        assert cmd.proc.poll() is None, "the ingest ended before it could be stopped: give it more files"
        code, left = cmd.stop(sig)
        assert code not in (None, 0), f"the ingest was not stopped by {sig.name} (exit code {code})"
        assert not left, f"{len(left)} processes are left after {sig.name}:\n{describe(left)}"
    finally: cmd.kill_all()
