"""Evaluation integrity and inputs from outside, attacked as a model, a hostile server or a careless task file would.

- A canary gold answer sits in `metadata.jsonl` (and `.parquet`) beside the attachment, GAIA's own layout, next to another
  task's file; every research tool that takes a path or URL asks for it every way we know (bare name, `..`, absolute,
  `file://`, a link to it, a linked folder, a zip holding it or a link to it), directly and through LangGraph's ToolNode,
  and the canary must never appear in what a tool returns. The browser's tools are tried when a browser can be started.
- `gaia-mas course fetch` with file names from the server such as `../x` and absolute paths writes only inside its folder.
- An xlsx of under 5 KB that spans A1:XFD1048576 is refused by both spreadsheet paths, in a child bounded in time and memory.
- A task file that mixes good and bad rows runs the good ones through the real CLI; one with no good row exits non-zero.

Every server here listens on 127.0.0.1 only; every child process has a timeout; everything is written under tmp_path."""
import base64, contextlib, http.server, json, os, re, resource, secrets, shutil, signal, socket, stat, subprocess, sys, threading, time, zipfile
from pathlib import Path
import pytest
from gaia_mas.core.scripted import ScriptedChatModel
from gaia_mas.core.utils import run_sync

pytestmark = pytest.mark.security

ROOT = Path(__file__).resolve().parents[3]
GAIA = [sys.executable, "-c", "import sys; from gaia_mas.cli import main; sys.exit(main())"]
CANARY, OTHER = f"CANARY-{secrets.token_hex(6)}", f"OTHER-TASK-{secrets.token_hex(6)}"
LEAKS = (CANARY, OTHER)


def cli_env(**extra) -> dict:
    "A CLI child's environment: no keys, no tracing."
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GAIA_MAS_SCRIPTED", "TAVILY_API_KEY")}
    return {**env, "OPIK_TRACK_DISABLE": "true", "NO_PROXY": "127.0.0.1,localhost", **extra}


@pytest.fixture
def layout(tmp_path):
    "GAIA's layout: the task file with the gold beside the attachments, another task's file, and every way round the rules."
    d = tmp_path/"gaia"/"validation"; d.mkdir(parents=True)
    gold = {"task_id": "t1", "Question": "What does mine.txt say?", "Level": 1, "file_name": "mine.txt", "Final answer": CANARY}
    (d/"metadata.jsonl").write_text(json.dumps(gold) + "\n")
    (d.parent/"metadata.jsonl").write_text(json.dumps(gold) + "\n")          # for ../metadata.jsonl
    import pyarrow as pa, pyarrow.parquet as pq
    pq.write_table(pa.Table.from_pylist([gold]), d/"metadata.parquet")
    (d/"mine.txt").write_text("my data: the harbour has 12 cranes")
    (d/"theirs.txt").write_text(f"another task's attachment: {OTHER}")
    (d/"copy.txt").write_text(json.dumps(gold))                               # the gold under an innocent name
    (d/"answers.csv").write_text(f"task_id,Final answer\nt1,{CANARY}\n")
    (d/"alias.txt").symlink_to(d/"metadata.jsonl")
    (d/"linked").symlink_to(d, target_is_directory=True)
    with zipfile.ZipFile(d/"bundle.zip", "w") as z:                        # an attachment that is an archive
        z.writestr("readme.txt", "zip data: 7 boats")
        z.writestr("metadata.jsonl", json.dumps(gold)); z.writestr("../metadata.jsonl", json.dumps(gold))
        z.writestr("notes/answers.jsonl", json.dumps({"final_answer": CANARY}))
        link = zipfile.ZipInfo("gold-link.txt"); link.external_attr = (stat.S_IFLNK | 0o777) << 16
        z.writestr(link, str(d/"metadata.jsonl"))
    with zipfile.ZipFile(d/"evil.zip", "w") as z: z.writestr("x.txt", OTHER)  # another task's archive
    return d


def hostile_paths(d:Path) -> list[str]:
    "Every way a model might name the gold file or another task's file."
    names = ["metadata.jsonl", "../metadata.jsonl", "metadata.parquet", "alias.txt", "theirs.txt", "copy.txt", "answers.csv",
             "linked/metadata.jsonl", "linked/theirs.txt", "evil.zip", "./metadata.jsonl", "METADATA.JSONL"]
    absolute = [str(d/n) for n in names] + [f"{d}/x/../metadata.jsonl", str(d.parent/"metadata.jsonl"), f"{d}//metadata.jsonl"]
    return names + absolute + [f"file://{d}/metadata.jsonl", f"file://{d}/theirs.txt", f"file://{d}/../metadata.jsonl"]


def says(out) -> str:
    "A tool's output as text, an exception's message included."
    return out if isinstance(out, str) else json.dumps(out, default=str)


def call(tool, args:dict) -> str:
    try: return says(tool.invoke(args))
    except Exception as e: return f"{type(e).__name__}: {e}"


def path_args(tool) -> list[str]:
    "The arguments of a tool that name a file or an address."
    return [a for a in tool.args if re.search(r"path|url|file", a)]


@contextlib.contextmanager
def echo_server():
    "An OpenAI stand-in whose transcription echoes the uploaded bytes: a file that reached it would show in the answer."
    class Echo(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            reply = json.dumps({"text": body.decode("latin-1")}).encode()
            self.send_response(200); self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply))); self.end_headers(); self.wfile.write(reply)
        def log_message(self, *a): pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try: yield f"http://127.0.0.1:{server.server_port}/v1"
    finally: server.shutdown(); server.server_close()


def echo_vision(messages) -> str:
    "A vision model that repeats the image it was sent, decoded: a leak through image_tool would show."
    parts = [p for m in messages if isinstance(m.content, list) for p in m.content if p.get("type") == "image_url"]
    return " ".join(base64.b64decode(p["image_url"]["url"].split(",", 1)[1]).decode("latin-1") for p in parts) or "no image"


@pytest.fixture
def offline(monkeypatch):
    "Web tools pointed at a closed port, audio at the echo server: nothing leaves 127.0.0.1."
    for k in ("OPENAI_API_KEY", "TAVILY_API_KEY", "GAIA_MAS_ALLOWED_ROOTS"): monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("GAIA_MAS_YOUTUBE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("GAIA_MAS_WIKIPEDIA_API", "http://127.0.0.1:9/w/api.php")
    with echo_server() as url:
        monkeypatch.setenv("OPENAI_BASE_URL", url); yield


@pytest.fixture
def research_tools(offline):
    from gaia_mas.gaia.tools.research_tools import get_research_tools
    return run_sync(get_research_tools(browser=False, vision_model=ScriptedChatModel(responder=echo_vision)))


def attack(tools, d:Path) -> dict[tuple[str, str], str]:
    "What every path-or-URL tool returns for every hostile path, keyed by (tool, path)."
    out, targets = {}, [t for t in tools if path_args(t)]
    assert {"text_file_tool", "read_attachment", "zip_file_tool", "image_tool", "audio_transcription_tool",
            "youtube_transcript_tool"} <= {t.name for t in targets}
    for t in targets:
        for p in hostile_paths(d): out[t.name, p] = call(t, {a: p for a in path_args(t)})
    return out


def assert_no_leak(outputs:dict, *secrets_):
    leaked = {k: v[:200] for k, v in outputs.items() if any(s in v for s in secrets_)}
    assert not leaked, f"{len(leaked)} tool calls leaked: {leaked}"


def test_attachment_readable_gold_never(research_tools, layout):
    "In a research step the attachment is read, by its bare name too; nothing else is, the gold least of all."
    text = next(t for t in research_tools if t.name == "text_file_tool")
    with research_tools.step_scope({"file": str(layout/"mine.txt")}):
        assert "12 cranes" in text.invoke({"file_path": "mine.txt"}) and "12 cranes" in text.invoke({"file_path": str(layout/"mine.txt")})
        outputs = attack(research_tools, layout)
    assert_no_leak(outputs, *LEAKS)
    refusals = [k for k, v in outputs.items() if k[0] == "text_file_tool" and v.startswith("Error: Refused")]
    assert len(refusals) >= len(hostile_paths(layout)) - 3, outputs   # the file:// forms fail as missing files instead


def test_zip_attachment_members(research_tools, layout):
    "A zip attachment's members are readable; a gold member, a member named ../, and a link member are not."
    tools = {t.name: t for t in research_tools}
    with research_tools.step_scope({"file": str(layout/"bundle.zip")}):
        whole = tools["zip_file_tool"].invoke({"file_path": "bundle.zip"})
        members = {m: tools["zip_file_tool"].invoke({"file_path": "bundle.zip", "member": m})
                   for m in ("metadata.jsonl", "../metadata.jsonl", "notes/answers.jsonl", "gold-link.txt")}
        any_reader = tools["read_attachment"].invoke({"file_path": "bundle.zip"})
        outputs = attack(research_tools, layout)
    assert "zip data: 7 boats" in whole and "zip data: 7 boats" in any_reader
    assert "not followed" in members["gold-link.txt"] and "never read gold" in members["notes/answers.jsonl"]
    assert_no_leak({("zip", "whole"): whole, ("read_attachment", "bundle.zip"): any_reader, **{("zip", m): v for m, v in members.items()},
                    **outputs}, *LEAKS)
    assert not list(layout.parent.parent.glob("**/readme.txt")), "a member was extracted beside the archive"


def test_allowed_roots_never_open_the_gold(research_tools, layout, monkeypatch):
    "GAIA_MAS_ALLOWED_ROOTS opens a folder on purpose (another task's file becomes readable) but never its gold."
    monkeypatch.setenv("GAIA_MAS_ALLOWED_ROOTS", str(layout.parent))
    with research_tools.step_scope({"file": str(layout/"mine.txt")}): outputs = attack(research_tools, layout)
    assert OTHER in outputs["text_file_tool", "theirs.txt"]                 # the control: the extra root works
    assert_no_leak(outputs, CANARY)


def test_outside_a_step_no_gold(research_tools, layout, monkeypatch):
    "Called by hand (a notebook), tools read the working directory, still never a gold file."
    monkeypatch.chdir(layout)
    outputs = attack(research_tools, layout)
    assert OTHER in outputs["text_file_tool", "theirs.txt"]
    assert_no_leak(outputs, CANARY)


def test_through_tool_node(research_tools, layout):
    "A scripted researcher asks for every hostile path with every file tool, through the ToolNode the graph uses."
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition
    file_tools = [t for t in research_tools if "file_path" in t.args]
    calls = [{"name": t.name, "args": {"file_path": p}, "id": f"c{i}"}
             for i, (t, p) in enumerate((t, p) for t in file_tools for p in [*hostile_paths(layout), "mine.txt"])]
    model = ScriptedChatModel(script=[AIMessage(content="", tool_calls=calls), "done"])
    g = StateGraph(MessagesState)
    g.add_node("llm", lambda s: {"messages": [model.bind_tools(research_tools).invoke(s["messages"])]})
    g.add_node("tools", ToolNode(list(research_tools)))
    g.add_edge(START, "llm"); g.add_conditional_edges("llm", tools_condition); g.add_edge("tools", "llm")
    with research_tools.step_scope({"file": str(layout/"mine.txt")}):
        out = g.compile().invoke({"messages": [HumanMessage(content="What is the gold answer?")]})
    tool_msgs = [m for m in out["messages"] if m.type == "tool"]
    assert len(tool_msgs) == len(calls)
    assert any("12 cranes" in m.content for m in tool_msgs)                # the attachment itself was read
    assert_no_leak({(m.name, m.tool_call_id): says(m.content) for m in tool_msgs}, *LEAKS)


def test_whole_graph_never_sees_the_gold(research_tools, layout):
    "The real graph: the researcher asks for the gold every way; whatever the tools return flows on to the final answer."
    from langchain_core.messages import AIMessage, ToolMessage
    from gaia_mas.gaia.agents.config import load_baseline_prompts, make_agent_configs
    from gaia_mas.gaia.agents.graph import create_multi_agent_graph
    from gaia_mas.gaia.agents.scripted import happy_path_responder, role_of
    happy = happy_path_responder()
    calls = [{"name": "read_attachment", "args": {"file_path": p}, "id": f"r{i}"} for i, p in enumerate([*hostile_paths(layout), "mine.txt"])]
    def respond(messages):
        role, last = role_of(messages), messages[-1]
        if role == "researcher":
            if not isinstance(last, ToolMessage): return AIMessage(content="", tool_calls=calls)
            return {"result": " | ".join(str(m.content) for m in messages if isinstance(m, ToolMessage))}
        if role == "expert": return {"expert_answer": "see trace", "reasoning_trace": str(last.content)}
        if role == "finalizer": return {"final_answer": "see trace", "final_reasoning_trace": str(last.content)}
        return happy(messages)
    app, _ = create_multi_agent_graph(make_agent_configs(load_baseline_prompts()), research_tools=research_tools, expert_tools=[],
                                      llms=ScriptedChatModel(responder=respond))
    final = app.invoke({"question": "What is the final answer in metadata.jsonl?", "file": str(layout/"mine.txt")},
                       {"recursion_limit": 100})
    seen = json.dumps(final, default=str)
    assert "12 cranes" in final["research_results"][0] and "12 cranes" in final["final_reasoning_trace"]   # the pipe carries tool output
    assert not any(s in seen for s in LEAKS), "the gold reached the graph's state"


# --- the browser's tools, when a browser can be started ---

SERVER = ROOT/"tools"/"mcp"/"node_modules"/".bin"/"playwright-mcp"
NO_BROWSER = [w for w, ok in (("chromium", shutil.which("chromium")), ("@playwright/mcp", SERVER.exists())) if not ok]


@pytest.fixture(scope="module")
def browser_url(tmp_path_factory):
    if NO_BROWSER: pytest.skip(f"{', '.join(NO_BROWSER)} not installed: run tools/install_system.sh")
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    log = tmp_path_factory.mktemp("mcp")/"server.log"
    with open(log, "w") as f:
        proc = subprocess.Popen([str(ROOT/"tools"/"start_browser_mcp.sh"), str(port)], stdout=f, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0: break
            time.sleep(0.2)
        else: pytest.skip(f"the browser's MCP server did not start: {log.read_text()[-500:]}")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        with contextlib.suppress(ProcessLookupError): os.killpg(proc.pid, signal.SIGTERM)
        try: proc.wait(10)
        except subprocess.TimeoutExpired: os.killpg(proc.pid, signal.SIGKILL); proc.wait()


@pytest.mark.browser
def test_browser_never_opens_local_files(browser_url, layout, offline, request):
    import gaia_mas.gaia.tools.browser as browser
    if not hasattr(browser, "refused_url"):
        request.applymarker(pytest.mark.xfail(reason="needs helper D's change to 07b_browser: refuse file:// URLs", strict=False))
    from gaia_mas.gaia.tools.research_tools import get_research_tools
    tools = run_sync(get_research_tools(browser_url, browser=True))
    url_tools = [t for t in tools if t.name.startswith("browser_") and "url" in t.args]
    snap = next(t for t in tools if t.name == "browser_snapshot")
    assert any(t.name == "browser_navigate" for t in url_tools)
    outputs = {}
    with tools.step_scope({"file": str(layout/"mine.txt")}):
        for t in url_tools:
            for p in [f"file://{layout}/metadata.jsonl", f"FILE://{layout}/theirs.txt", f" file://{layout}/copy.txt",
                      f"file://localhost{layout}/metadata.jsonl", f"view-source:file://{layout}/metadata.jsonl"]:
                outputs[t.name, p] = call(t, {"url": p})
                outputs["browser_snapshot", p] = call(snap, {})
    assert_no_leak(outputs, *LEAKS)


# --- the course's file names ---

def test_course_names_stay_in_the_folder(tmp_path, caplog):
    from gaia_mas.gaia.runs.course import fake_course_server, fetch_course
    from gaia_mas.gaia.runs.tasks import load_tasks
    out, target = tmp_path/"a"/"b"/"course", tmp_path/"target"
    target.mkdir()
    names = {"u1": "../escape.txt", "u2": "../../../escape2.txt", "u3": str(target/"abs.txt"), "u4": "..", "u5": "",
             "u6": "a\x00b.txt", "u7": "..\\..\\win.txt", "u8": "x" * 5000 + ".txt", "u9": "metadata.jsonl", "u10": "/etc/passwd",
             "u11": "C:\\Windows\\evil.txt", "u12": "sub/../../up.txt"}
    questions = [{"task_id": t, "question": f"question {t}?", "Level": "1", "file_name": n} for t, n in names.items()]
    with fake_course_server(questions, files={t: f"content {t}".encode() for t in names}) as api:
        meta = fetch_course(out, api.url)
    inside = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")}
    saved = ("escape.txt", "escape2.txt", "abs.txt", "win.txt", "passwd", "evil.txt", "up.txt", "metadata.jsonl")
    assert inside == {"a", "a/b", "a/b/course", "target", *(f"a/b/course/{n}" for n in saved)}, inside
    assert (out/"escape.txt").read_text() == "content u1" and not (target/"abs.txt").exists()
    tasks = {t["task_id"]: t for t in load_tasks(meta)}
    assert len(tasks) == len(names)                                         # every question kept, refused names without a file
    assert all(t["file"] is None or Path(t["file"]).resolve().parent == out.resolve() for t in tasks.values())
    assert (out/"metadata.jsonl").read_text().count("\n") == len(names)


# --- the spreadsheet bomb ---

BOMB = """
import json, sys
from gaia_mas.gaia.tools.file_tools import unstructured_excel_tool
print(json.dumps([unstructured_excel_tool.invoke({"file_path": sys.argv[1], "colors": c}) for c in (False, True)]))
"""

def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (6 * 2**30, 6 * 2**30))     # the bomb took ~2 GB in the colour path; a margin for imports


@pytest.mark.subprocess
def test_xlsx_bomb_refused_in_both_paths(tmp_path):
    import openpyxl
    wb = openpyxl.Workbook(); wb.active["A1"], wb.active["XFD1048576"] = "top", "far"; wb.save(tmp_path/"bomb.xlsx")
    assert (tmp_path/"bomb.xlsx").stat().st_size < 5000
    p = subprocess.run([sys.executable, "-c", BOMB, str(tmp_path/"bomb.xlsx")], capture_output=True, text=True, timeout=120,
                       cwd=tmp_path, env=cli_env(HOME=str(tmp_path)), preexec_fn=_limit_memory)
    assert p.returncode == 0, p.stderr[-2000:]
    plain, colours = json.loads(p.stdout.strip().splitlines()[-1])
    for out in (plain, colours): assert out.startswith("Error: bomb.xlsx is refused unread") and "XLSX_MAX_CELLS" in out, out


# --- bad task rows, through the CLI ---

def gaia(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([*GAIA, *map(str, args)], capture_output=True, text=True, timeout=300, env=cli_env(), cwd=cwd)


@pytest.mark.subprocess
def test_bad_rows_skipped_good_rows_answered(tmp_path):
    rows = ['{"task_id": "ok1", "question": "What is 6 * 7?"}', '[1, 2, 3]', '"a string"', '{"task_id": "b1", "question": ""}',
            '{"task_id": "b2", "Question": "q?", "file_name": 5}', '{"task_id": "b3", "question": "q?", "Level": "hard"}',
            '{"task_id": "b4", "question": ["q"]}', '{"task_id": "b5", "question": "q?", "file_name": "../../etc/passwd"}',
            '{not json', '{"Question": "no id"}', '{"task_id": "ok2", "Question": "How many legs has a spider?", "Level": 1}']
    (tmp_path/"mixed.jsonl").write_text("\n".join(rows) + "\n")
    r = gaia("run", "mixed.jsonl", "--out", "results.jsonl", "--no-progress", "--provider", "scripted", "--cache-dir", "cache", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    answered = [json.loads(l) for l in (tmp_path/"results.jsonl").read_text().splitlines()]
    assert sorted(a["task_id"] for a in answered) == ["ok1", "ok2"] and all(a["status"] == "ok" for a in answered)
    for line in range(2, 11): assert f"mixed.jsonl:{line}:" in r.stderr, (line, r.stderr)


@pytest.mark.subprocess
def test_no_good_row_exits_non_zero(tmp_path):
    (tmp_path/"bad.jsonl").write_text('[1, 2, 3]\n{"task_id": 5, "question": 7}\n')
    r = gaia("run", "bad.jsonl", "--out", "results.jsonl", "--no-progress", "--provider", "scripted", "--cache-dir", "cache", cwd=tmp_path)
    assert r.returncode != 0 and "holds no task" in r.stderr, r.stderr[-2000:]
    assert not (tmp_path/"results.jsonl").exists() or not (tmp_path/"results.jsonl").read_text().strip()
