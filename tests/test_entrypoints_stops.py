"""`langgraph dev` on the project's graphs, stopped with SIGTERM or SIGINT sent to its own process, leaves no process
behind: the document parser's worker that the entry points start (to build the sample collection for a new user)
ends with the server. Every process the command spawned carries a tag in its environment, so the test finds them all."""
import shutil, signal, sys, time
from pathlib import Path
import httpx, pytest

from gaia_mas.core.pg_server import free_port
from proc_tree import Tagged, describe

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[1]
LANGGRAPH = shutil.which("langgraph", path=str(Path(sys.executable).parent)) or shutil.which("langgraph")
ENV = {"GAIA_MAS_PROVIDER": "scripted", "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGSMITH_TRACING": "false",
       "LANGCHAIN_TRACING_V2": "false", "OPIK_TRACK_DISABLE": "true", "OPENAI_API_KEY": "", "OPENAI_BASE_URL": "",
       "LANGSMITH_API_KEY": ""}


@pytest.mark.skipif(LANGGRAPH is None, reason="langgraph-cli is not installed: pip install 'langgraph-cli[inmem]' (a dev requirement)")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_langgraph_dev_leaves_no_process_behind(tmp_path, sig):
    port = free_port()
    cmd = Tagged([LANGGRAPH, "dev", "--config", str(ROOT/"langgraph.json"), "--port", str(port), "--host", "127.0.0.1",
                  "--no-browser", "--no-reload"], env={**ENV, "HOME": str(tmp_path)}, cwd=tmp_path)
    try:
        end = time.monotonic() + 180
        while True:  # a new HOME: the graphs build the sample collection, with the parser's worker
            try:
                if httpx.get(f"http://127.0.0.1:{port}/ok", timeout=2).status_code == 200: break
            except httpx.HTTPError: pass
            assert cmd.proc.poll() is None and time.monotonic() < end, cmd.proc.stdout.read()[-3000:]
            time.sleep(0.5)
        from langgraph_sdk import get_sync_client
        from gaia_mas.rag.workflows.state import create_initial_state
        client = get_sync_client(url=f"http://127.0.0.1:{port}", timeout=120)
        run = client.runs.wait(client.threads.create()["thread_id"], "sequential",  # a run builds the graph
                               input=create_initial_state("What is a circuit breaker?", "lg-stop", "sequential"))
        assert run["final_answer"], run
        spawned = cmd.processes()
        assert any("spawn_main" in " ".join(p.cmdline()) for p in spawned), describe(spawned)
        code, left = cmd.stop(sig)
        assert code is not None, "langgraph dev did not exit"
        assert not left, f"{len(left)} of {len(spawned)} processes are left after {sig.name}:\n{describe(left)}"
    finally: cmd.kill_all()
