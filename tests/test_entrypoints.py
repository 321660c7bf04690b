"""`langgraph dev` serves the graphs of langgraph.json (the three RAG workflows and the GAIA graph): one thread through
a workflow and one through the GAIA graph with `langgraph-sdk`, scripted models, on a free loopback port."""
import asyncio, contextlib, os, shutil, signal, subprocess, sys, time
from pathlib import Path
import httpx, pytest

from gaia_mas.core.pg_server import free_port

ROOT = Path(__file__).resolve().parents[1]
LANGGRAPH = shutil.which("langgraph", path=str(Path(sys.executable).parent)) or shutil.which("langgraph")

@contextlib.contextmanager
def langgraph_dev(cwd:Path, timeout:float=120):
    "Start `langgraph dev` on a free port in `cwd` (its state folder lands there); yield the URL; stop its process group."
    port = free_port()
    env = {**os.environ, "GAIA_MAS_PROVIDER": "scripted", "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGSMITH_TRACING": "false",
           "LANGCHAIN_TRACING_V2": "false", "OPIK_TRACK_DISABLE": "true", "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}
    env.pop("LANGSMITH_API_KEY", None)
    proc = subprocess.Popen([LANGGRAPH, "dev", "--config", str(ROOT/"langgraph.json"), "--port", str(port), "--host", "127.0.0.1",
                             "--no-browser", "--no-reload", "--allow-blocking"], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    url, end = f"http://127.0.0.1:{port}", time.monotonic() + timeout
    try:
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/ok", timeout=2).status_code == 200: break
            if proc.poll() is not None or time.monotonic() > end:
                raise RuntimeError("langgraph dev did not start:\n" + _stop(proc)[-3000:])
            time.sleep(0.5)
        yield url
    finally: _stop(proc)

def _stop(proc) -> str:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try: proc.wait(timeout=20)
        except subprocess.TimeoutExpired: os.killpg(proc.pid, signal.SIGKILL); proc.wait(timeout=10)
    return proc.stdout.read().decode(errors="replace")

@pytest.mark.skipif(LANGGRAPH is None, reason="langgraph-cli is not installed: pip install 'langgraph-cli[inmem]' (a dev requirement)")
def test_langgraph_dev_runs_a_workflow_thread_and_a_gaia_thread(tmp_path):
    from langgraph_sdk import get_client
    from gaia_mas.rag.state import create_initial_state

    async def go(url):
        client = get_client(url=url, timeout=60)
        graphs = {a["graph_id"] for a in await client.assistants.search()}
        thread = await client.threads.create()
        rag = await asyncio.wait_for(client.runs.wait(thread["thread_id"], "sequential",
                                     input=create_initial_state("What is a circuit breaker?", "lg-1", "sequential")), 60)
        state = (await client.threads.get_state(thread["thread_id"]))["values"]
        gaia = await asyncio.wait_for(client.runs.wait((await client.threads.create())["thread_id"], "gaia",
                                      input={"question": "What is six times seven?", "file": None}), 60)
        return graphs, rag, state, gaia

    with langgraph_dev(tmp_path) as url:
        graphs, rag, state, gaia = asyncio.run(go(url))
    assert graphs == {"sequential", "parallel", "supervisor", "gaia"}
    assert rag["final_answer"] and rag["citations"] and state["final_answer"] == rag["final_answer"]
    assert gaia["final_answer"] == "42"  # the scripted GAIA model's dry answer
