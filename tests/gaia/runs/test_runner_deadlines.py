"""`--timeout` holds even for a call in flight: a model server that accepts the connection and never answers, and a
tool that sleeps for 300 s, each end their question at the deadline (plus the runner's grace), recorded as `timeout`,
while the other questions of the batch are answered."""
import contextlib, json, os, socket, subprocess, sys, textwrap, threading, time
from langchain_core.messages import SystemMessage
from gaia_mas.gaia.agents.scripted import happy_path_responder
import pytest

pytestmark = [pytest.mark.subprocess, pytest.mark.security]

GAIA = [sys.executable, "-c", "import sys; from gaia_mas.cli import main; sys.exit(main())"]
HANG = "never-answered"


def env(**extra):
    "A subprocess environment: no key, no tracing, no browser, web services pointed at a closed loopback port."
    keep = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GAIA_MAS_SCRIPTED")}
    dead = "http://127.0.0.1:9"
    return {**keep, "OPIK_TRACK_DISABLE": "true", "NO_PROXY": "127.0.0.1,localhost", "GAIA_MAS_BROWSER": "0",
            "GAIA_MAS_WIKIPEDIA_API": f"{dead}/w/api.php", "GAIA_MAS_TAVILY_URL": dead, "GAIA_MAS_YOUTUBE_URL": dead, **extra}


def completion(body: bytes) -> bytes:
    "An HTTP response carrying the happy path's reply to the agent whose system prompt is in `body`."
    msgs = json.loads(body or b"{}").get("messages", [])  # a GET (the model list) has no body
    system = next((m["content"] for m in msgs if m["role"] == "system"), "")
    content = json.dumps(happy_path_responder("Paris")([SystemMessage(content=str(system))]))
    data = json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "fake",
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}).encode()
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(data), data)


def read_request(conn: socket.socket) -> bytes | None:
    "One HTTP request's body, or None once the client has gone."
    buf = b""
    while b"\r\n\r\n" not in buf:
        if not (chunk := conn.recv(65536)): return None
        buf += chunk
    head, body = buf.split(b"\r\n\r\n", 1)
    n = next((int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")), 0)
    while len(body) < n:
        if not (chunk := conn.recv(65536)): return None
        body += chunk
    return body


@contextlib.contextmanager
def model_server():
    "A raw socket server on a free loopback port: it answers like a model, except that a request about the question "
    "marked HANG is read and then never answered (the connection is held open until the test ends)."
    stop, srv = threading.Event(), socket.create_server(("127.0.0.1", 0))
    hung = []
    def serve(conn):
        with conn:
            conn.settimeout(1)
            while not stop.is_set():
                try: body = read_request(conn)
                except (TimeoutError, OSError): continue
                if body is None: return
                if HANG.encode() in body: hung.append(time.monotonic()); stop.wait(); return   # reads, then sleeps
                conn.sendall(completion(body))
    def accept():
        srv.settimeout(0.2)
        while not stop.is_set():
            try: conn, _ = srv.accept()
            except (TimeoutError, OSError): continue
            threading.Thread(target=serve, args=(conn,), daemon=True).start()
    t = threading.Thread(target=accept, daemon=True); t.start()
    try: yield f"http://127.0.0.1:{srv.getsockname()[1]}/v1", hung
    finally: stop.set(); t.join(5); srv.close()


def write_tasks(path, questions):
    "A GAIA-style metadata.jsonl."
    path.write_text("".join(json.dumps({"task_id": f"q{i}", "Question": q, "Level": 1, "Final answer": "Paris", "file_name": ""}) + "\n"
                            for i, q in enumerate(questions)))


def test_a_model_that_never_answers_is_bounded_by_timeout(tmp_path):
    write_tasks(tmp_path/"metadata.jsonl", ["What is the capital of France?", f"Which city? ({HANG})", "Capital of France, again?"])
    out = tmp_path/"results.jsonl"
    with model_server() as (url, hung):
        t0 = time.monotonic()
        # the hosted budget: this fake model answers the hosted prompts (a loopback server would get the local budget)
        done = subprocess.run([*GAIA, "run", str(tmp_path/"metadata.jsonl"), "--out", str(out), "--timeout", "10",
                               "--base-url", url, "--budget", "hosted", "--concurrency", "2", "--no-progress",
                               "--cache-dir", str(tmp_path/"cache")],
                              capture_output=True, text=True, timeout=120, env=env())
        took = time.monotonic() - t0
    assert done.returncode == 0, done.stderr
    records = {r["task_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    late = records["q1"]
    print(f"\nmodel server that never answers, --timeout 10 (client time-out 120 s x 6 retries): question recorded as "
          f"{late['status']} after {late['wall_time_s']:.1f} s ({late['error']}); other questions: "
          f"{[(r['status'], r['model_answer']) for k, r in sorted(records.items()) if k != 'q1']}; whole run {took:.1f} s")
    assert hung, "the hanging question never reached the server"
    assert (late["status"], late["model_answer"]) == ("timeout", "")
    assert late["wall_time_s"] < 30, "the question ran far past its 10 s budget"
    assert [(records[k]["status"], records[k]["model_answer"]) for k in ("q0", "q2")] == [("ok", "Paris")] * 2


STUCK_TOOL_RUN = textwrap.dedent('''
    import json, sys, time
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.tools import tool
    from gaia_mas.gaia.agents.config import load_baseline_prompts, make_agent_configs
    from gaia_mas.gaia.agents.graph import create_multi_agent_graph
    from gaia_mas.gaia.runs.runner import run_batch
    from gaia_mas.gaia.runs.tasks import ResultWriter
    from gaia_mas.core.scripted import ScriptedChatModel
    from gaia_mas.gaia.agents.scripted import happy_path_responder, role_of

    @tool
    def stuck_tool(query: str) -> str:
        "Looks something up (and, for one question, never comes back)."
        if "stuck" in query: time.sleep(300)
        return "Paris"

    happy = happy_path_responder("Paris")
    def respond(messages):
        seen, role = " ".join(str(m.content) for m in messages), role_of(messages)
        if role == "planner" and "STUCK" in seen: return {"research_steps": ["Look up the STUCK thing"], "expert_steps": ["Answer"]}
        if role == "researcher" and not isinstance(messages[-1], ToolMessage):
            return AIMessage(content="", tool_calls=[{"name": "stuck_tool", "id": "c1",
                                                      "args": {"query": "stuck" if "STUCK" in seen else "capital"}}])
        return happy(messages)

    app, _ = create_multi_agent_graph(make_agent_configs(load_baseline_prompts()), research_tools=[stuck_tool],
                                      llms=ScriptedChatModel(responder=respond))
    tasks = [{"task_id": f"s{i}", "question": q, "level": 1} for i, q in enumerate(["Capital of France?", "STUCK: capital?", "France's capital?"])]
    t0 = time.monotonic()
    run_batch(app, tasks, ResultWriter(sys.argv[1]), concurrency=2, timeout=3)
    print(f"batch done in {time.monotonic() - t0:.1f} s", file=sys.stderr)
''')


def test_a_stuck_tool_is_bounded_and_does_not_hold_the_exit(tmp_path):
    out = tmp_path/"results.jsonl"
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-c", STUCK_TOOL_RUN, str(out)], capture_output=True, text=True, timeout=120, env=env())
    took = time.monotonic() - t0
    assert done.returncode == 0, done.stderr
    records = {r["task_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    stuck = records["s1"]
    print(f"\ntool that sleeps 300 s, timeout 3 s: question recorded as {stuck['status']} after {stuck['wall_time_s']:.1f} s "
          f"({stuck['error']}); others {[records[k]['status'] for k in ('s0', 's2')]}; the process exited after {took:.1f} s")
    assert stuck["status"] == "timeout"
    assert [(records[k]["status"], records[k]["model_answer"]) for k in ("s0", "s2")] == [("ok", "Paris")] * 2
    assert took < 100, "the process waited for the stuck tool"
