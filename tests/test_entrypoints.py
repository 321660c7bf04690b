"""`langgraph dev` serves the graphs of langgraph.json as shipped, with no extra flag (its check for blocking calls on
the event loop stays on): each graph has an input schema Studio can draw, each workflow answers and streams, and the
GAIA graph answers, through `langgraph-sdk` with scripted models on a free loopback port."""
import asyncio, contextlib, os, shutil, signal, subprocess, sys, time
from pathlib import Path
import httpx, pytest

from gaia_mas.core.pg_server import free_port

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[1]
LANGGRAPH = shutil.which("langgraph", path=str(Path(sys.executable).parent)) or shutil.which("langgraph")

@contextlib.contextmanager
def langgraph_dev(cwd:Path, timeout:float=180):
    "Start `langgraph dev` on a free port in `cwd` (its state folder lands there); yield the URL; stop its process group."
    port = free_port()
    env = {**os.environ, "GAIA_MAS_PROVIDER": "scripted", "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGSMITH_TRACING": "false",
           "LANGCHAIN_TRACING_V2": "false", "OPIK_TRACK_DISABLE": "true", "OPENAI_API_KEY": "", "OPENAI_BASE_URL": "",
           "HOME": str(cwd)}  # a new user: the first run builds the sample collection (a new cache folder)
    env.pop("LANGSMITH_API_KEY", None)
    proc = subprocess.Popen([LANGGRAPH, "dev", "--config", str(ROOT/"langgraph.json"), "--port", str(port), "--host", "127.0.0.1",
                             "--no-browser", "--no-reload"], cwd=cwd, env=env,
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
def test_langgraph_dev_runs_each_graph_as_shipped(tmp_path):
    from langgraph_sdk import get_client
    q = {"question": "What is a circuit breaker?"}

    async def go(url):
        client = get_client(url=url, timeout=180)
        schemas = {a["graph_id"]: (await client.assistants.get_schemas(a["assistant_id"]))["input_schema"]
                   for a in await client.assistants.search()}
        answers, streams = {}, {}
        for p in ("sequential", "parallel", "supervisor"):
            thread = (await client.threads.create())["thread_id"]
            answers[p] = await asyncio.wait_for(client.runs.wait(thread, p, input=q), 180)
            thread = (await client.threads.create())["thread_id"]
            streams[p] = [part.event async for part in client.runs.stream(thread, p, input=q,
                                                                          stream_mode=["updates", "messages-tuple"])]
        thread = (await client.threads.create())["thread_id"]
        answers["gaia"] = await asyncio.wait_for(client.runs.wait(thread, "gaia", input={"question": "What is six times seven?"}), 90)
        return schemas, answers, streams

    with langgraph_dev(tmp_path) as url:
        schemas, answers, streams = asyncio.run(go(url))
    assert set(schemas) == {"sequential", "parallel", "supervisor", "gaia"}
    for graph, schema in schemas.items():
        assert schema and schema["type"] == "object" and schema["properties"]["question"]["type"] == "string", graph
    for p in ("sequential", "parallel", "supervisor"):
        assert "__error__" not in answers[p] and answers[p]["final_answer"] and answers[p]["citations"], (p, answers[p])
        assert streams[p].count("updates") >= 2 and "messages" in streams[p], (p, streams[p])
    assert answers["gaia"]["final_answer"] == "42"  # the scripted GAIA model's dry answer
