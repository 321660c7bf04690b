"""The researcher's browser for real: Playwright's MCP server (tools/start_browser_mcp.sh) driving Debian's chromium,
a page served on 127.0.0.1 (allowed by GAIA_MAS_BROWSER_ALLOW), and the LangChain tools the model is given, run by LangGraph's ToolNode; and `gaia-mas ask`
starting that server by itself when none is configured or running.

Needs tools/install_system.sh. Skipped when chromium or @playwright/mcp is missing, except under CI, where that fails."""
import http.server, os, secrets, shutil, signal, socket, subprocess, sys, threading, time
from pathlib import Path
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from gaia_mas.gaia.tools.research_tools import get_research_tools
from gaia_mas.core.scripted import ScriptedChatModel
from gaia_mas.core.utils import run_sync

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[3]
SERVER = ROOT/"tools"/"mcp"/"node_modules"/".bin"/"playwright-mcp"
MISSING = [what for what, ok in (("chromium", shutil.which("chromium")), ("@playwright/mcp", SERVER.exists())) if not ok]
if MISSING and not os.environ.get("CI"):
    pytest.skip(f"{', '.join(MISSING)} not installed: run tools/install_system.sh", allow_module_level=True)

TOKEN = f"TOKEN-{secrets.token_hex(4)}"
PAGE = f"<html><head><title>Token page</title></head><body><h1>Vault</h1><p>The token is {TOKEN}.</p></body></html>"

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); return s.getsockname()[1]

def wait_for_port(port:int, proc, seconds:float=60):
    "Wait until something accepts connections on 127.0.0.1:port, or fail with the server's log."
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None: break
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0: return
        time.sleep(0.2)
    raise RuntimeError(f"the MCP server did not start on port {port}")

@pytest.fixture(scope="module")
def page_url():
    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = PAGE.encode()
            self.send_response(200); self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
        def log_message(self, *a): pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    old = os.environ.get("GAIA_MAS_BROWSER_ALLOW")  # the page is on loopback, which the browser opens only when allowed
    os.environ["GAIA_MAS_BROWSER_ALLOW"] = f"127.0.0.1:{server.server_port}"
    yield f"http://127.0.0.1:{server.server_port}/vault.html"
    if old is None: os.environ.pop("GAIA_MAS_BROWSER_ALLOW", None)
    else: os.environ["GAIA_MAS_BROWSER_ALLOW"] = old
    server.shutdown(); server.server_close()

@pytest.fixture(scope="module")
def mcp_url(tmp_path_factory, page_url):  # after page_url, which allows the page for the server's guard
    port, log = free_port(), tmp_path_factory.mktemp("mcp")/"server.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([str(ROOT/"tools"/"start_browser_mcp.sh"), str(port)], stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try: proc.wait(10)
        except subprocess.TimeoutExpired: os.killpg(proc.pid, signal.SIGKILL); proc.wait()
        print(f"--- MCP server log\n{log.read_text()[-2000:]}")

@pytest.fixture(scope="module")
def tools(mcp_url): return run_sync(get_research_tools(mcp_url))

def by_name(tools, name): return next(t for t in tools if t.name == name)

def test_browser_tools_are_research_tools(tools):
    names = [t.name for t in tools]
    assert {"browser_navigate", "browser_snapshot", "browser_click", "browser_find"} <= set(names)
    assert "browser_run_code_unsafe" not in names and "browser_file_upload" not in names
    assert names[:7] == ["youtube_transcript_tool", "tavily_tool", "wikipedia_tool", "unstructured_excel_tool",
                         "unstructured_powerpoint_tool", "pdf_tool", "text_file_tool"]

def test_one_browser_per_step(tools, page_url):
    nav, snap = by_name(tools, "browser_navigate"), by_name(tools, "browser_snapshot")
    with tools.step_scope({"file": None, "current_research_index": 0}):
        print(nav.invoke({"url": page_url})[:300])
        seen = snap.invoke({})
    print(seen)
    assert TOKEN in seen
    # Outside a step, each call has a browser of its own: the page opened above is not there.
    assert TOKEN not in snap.invoke({})

def test_model_reads_token_through_tool_node(tools, page_url):
    "A scripted researcher navigates, then snapshots, through the same ToolNode the researcher subgraph uses."
    def call(name, args, i): return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call{i}"}])
    def answer(messages): return f"The token is {next(m for m in reversed(messages) if m.type == 'tool').content.split('The token is ')[1][:14]}"
    model = ScriptedChatModel(script=[call("browser_navigate", {"url": page_url}, 1), call("browser_snapshot", {}, 2), answer])
    g = StateGraph(MessagesState)
    g.add_node("llm", lambda s: {"messages": [model.bind_tools(tools).invoke(s["messages"])]})
    g.add_node("tools", ToolNode(list(tools)))
    g.add_edge(START, "llm"); g.add_conditional_edges("llm", tools_condition); g.add_edge("tools", "llm")
    t = time.perf_counter()
    with tools.step_scope({"file": None, "current_research_index": 0}):
        out = g.compile().invoke({"messages": [HumanMessage(content="What is the token on the vault page?")]})
    print(f"answer: {out['messages'][-1].content} ({time.perf_counter() - t:.1f} s)")
    assert out["messages"][-1].content == f"The token is {TOKEN}"

def test_server_down_then_message(page_url):
    "A tool whose server has gone returns a message instead of raising."
    port = free_port()
    proc = subprocess.Popen([str(ROOT/"tools"/"start_browser_mcp.sh"), str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for_port(port, proc)
        tools = run_sync(get_research_tools(f"http://127.0.0.1:{port}/mcp"))
    finally:
        os.killpg(proc.pid, signal.SIGTERM); proc.wait(10)
    out = by_name(tools, "browser_navigate").invoke({"url": page_url})
    print(out)
    assert out.startswith("Error: the browser tool browser_navigate failed")


def test_outside_a_step_one_tool_set_shares_one_browser(mcp_url, page_url):
    "In a notebook, with no research step: navigate, then snapshot, sees the page (one session per tool set)."
    tools = run_sync(get_research_tools(mcp_url))
    assert TOKEN in by_name(tools, "browser_navigate").invoke({"url": page_url}) + by_name(tools, "browser_snapshot").invoke({})
    assert TOKEN in by_name(tools, "browser_snapshot").invoke({})


@pytest.mark.parametrize("url", ["file:///etc/passwd", "chrome://version", "view-source:http://127.0.0.1/", "javascript:alert(1)"])
def test_non_web_addresses_are_refused(tools, url):
    out = by_name(tools, "browser_navigate").invoke({"url": url})
    assert out.startswith("Error: the browser opens only http:// and https:// addresses"), out


ASK = """
import re, sys
from langchain_core.messages import AIMessage, ToolMessage
from gaia_mas import cli
from gaia_mas.gaia.agents import build as runner
from gaia_mas.gaia.agents.graph import create_multi_agent_graph
from gaia_mas.core.scripted import ScriptedChatModel
from gaia_mas.gaia.agents.scripted import happy_path_responder, role_of
page, seen = sys.argv[1], {}
happy = happy_path_responder("no token seen", 1)
def respond(messages):
    role, tool = role_of(messages), [m for m in messages if isinstance(m, ToolMessage)]
    if role == "researcher" and not tool:
        return AIMessage(content="", tool_calls=[{"name": "browser_navigate", "args": {"url": page}, "id": "nav1"}])
    if role == "researcher" and len(tool) == 1 and not re.search(r"TOKEN-[0-9a-f]{8}", tool[-1].content):
        return AIMessage(content="", tool_calls=[{"name": "browser_snapshot", "args": {}, "id": "snap1"}])
    if role == "researcher":
        seen["token"] = re.search(r"TOKEN-[0-9a-f]{8}", tool[-1].content).group(0)
        return {"result": "The page says the token is " + seen["token"]}
    if role in ("expert", "finalizer"):
        answer = seen.get("token", "no token seen")
        return {"expert_answer": answer, "reasoning_trace": "read it"} if role == "expert" else {"final_answer": answer, "final_reasoning_trace": "read it"}
    return happy(messages)
def build_app(configs, provider, checkpointer=None, tracing=False, *args, **kw):
    "The real graph and research tools (so the real browser), with a scripted model in place of OpenAI."
    return create_multi_agent_graph(configs, llms=ScriptedChatModel(responder=respond), checkpointer=checkpointer, tracing=tracing)
runner.build_app = build_app
sys.exit(cli.main(["ask", "What is the token on the vault page?", "--cache-dir", sys.argv[2]]))
"""

def test_ask_starts_its_own_browser(page_url, tmp_path):
    "`gaia-mas ask` with no MCP server configured or running starts one, answers from the page, says so in one line, and stops it."
    from gaia_mas.gaia.tools.browser import DEFAULT_MCP_URL, reachable
    if reachable(DEFAULT_MCP_URL): pytest.skip(f"something already listens at {DEFAULT_MCP_URL}, so ask would use it")
    env = {k: v for k, v in os.environ.items() if k not in ("GAIA_MAS_MCP_URL", "GAIA_MAS_BROWSER", "OPENAI_BASE_URL")}
    env.update(OPENAI_API_KEY="sk-test-never-sent", OPIK_TRACK_DISABLE="true", NO_PROXY="127.0.0.1,localhost")
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", ASK, page_url, str(tmp_path/"cache")], capture_output=True, text=True,
                       env=env, timeout=240, start_new_session=True)
    print(f"$ gaia-mas ask 'What is the token on the vault page?'   ({time.perf_counter() - t:.1f} s)")
    print(r.stderr.strip()); print(r.stdout.strip())
    started = [l for l in r.stderr.splitlines() if l.startswith("gaia-mas: started a browser")]
    assert (r.returncode, r.stdout) == (0, TOKEN + "\n"), r.stderr[-3000:]
    assert len(started) == 1
    url = started[0].split(" at ")[1].split(")")[0]
    assert not reachable(url), "the started server must stop with the run"
