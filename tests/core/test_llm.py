"""Rate limits and server errors: the real OpenAI client, pointed at a fake OpenAI-compatible server on 127.0.0.1
that answers 429 and 503 before it answers properly, retries with backoff and the question still gets its answer."""
import contextlib, json, os, subprocess, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from langchain_core.messages import SystemMessage
from gaia_mas.gaia.agents.config import load_baseline_prompts, make_agent_configs
from gaia_mas.gaia.agents.graph import create_multi_agent_graph
from gaia_mas.gaia.agents.build import real_llms
from gaia_mas.gaia.runs.runner import run_task
from gaia_mas.gaia.agents.scripted import happy_path_responder
import pytest


def completion(content):
    "An OpenAI chat completion carrying `content`."
    return {"id": "c", "object": "chat.completion", "created": 0, "model": "fake",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}


@contextlib.contextmanager
def fake_openai(failures, retry_after_ms=5):
    "A chat-completions server that first answers each status in `failures`, then plays the happy path."
    seen, respond = [], happy_path_responder("Paris")
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a): pass
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status = failures[len(seen)] if len(seen) < len(failures) else 200
            seen.append(status)
            system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
            data = json.dumps(completion(json.dumps(respond([SystemMessage(content=system)]))) if status == 200 else {"error": {"message": "slow down"}}).encode()
            self.send_response(status); self.send_header("Content-Type", "application/json")
            self.send_header("retry-after-ms", str(retry_after_ms)); self.send_header("Content-Length", str(len(data))); self.end_headers()
            self.wfile.write(data)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try: yield f"http://127.0.0.1:{server.server_port}/v1", seen
    finally: server.shutdown(); server.server_close()


def answer(base_url, max_retries):
    "The result record of one question through the real models against `base_url`."
    configs = make_agent_configs(load_baseline_prompts(), base_url=base_url)
    app, _ = create_multi_agent_graph(configs, research_tools=[], llms=real_llms(configs, llm_timeout=10, max_retries=max_retries))
    return run_task(app, {"task_id": "r1", "question": "What is the capital of France?"})[0]


def test_retries_on_429_and_5xx(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with fake_openai([429, 503, 429], retry_after_ms=10) as (url, seen):   # the server asks for short waits
        record = answer(url, max_retries=3)
    assert (record["status"], record["model_answer"]) == ("ok", "Paris")
    assert seen[:4] == [429, 503, 429, 200] and len(seen) == 3 + record["llm_calls"]
    assert (record["input_tokens"], record["output_tokens"]) == (100 * record["llm_calls"], 10 * record["llm_calls"])


def test_no_retries_means_the_failure_is_recorded(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with fake_openai([429]) as (url, seen):
        record = answer(url, max_retries=0)
    assert record["status"] == "error" and "429" in record["error"] and seen[0] == 429


@pytest.mark.subprocess
def test_backoff_stops_at_the_question_deadline(tmp_path):
    "A server that keeps answering 503 and asks for 20 s between retries: `--timeout 4` still ends the question in time."
    (tmp_path/"metadata.jsonl").write_text(json.dumps({"task_id": "b1", "Question": "Capital of France?", "Level": 1,
                                                       "Final answer": "Paris", "file_name": ""}) + "\n")
    out = tmp_path/"results.jsonl"
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env |= {"OPIK_TRACK_DISABLE": "true", "NO_PROXY": "127.0.0.1,localhost", "GAIA_MAS_BROWSER": "0"}
    with fake_openai([503] * 1000, retry_after_ms=20_000) as (url, seen):
        t0 = time.monotonic()
        done = subprocess.run([sys.executable, "-c", "import sys; from gaia_mas.cli import main; sys.exit(main())", "run",
                               str(tmp_path/"metadata.jsonl"), "--out", str(out), "--timeout", "4", "--max-retries", "6",
                               "--base-url", url, "--no-progress", "--cache-dir", str(tmp_path/"cache")],
                              capture_output=True, text=True, timeout=120, env=env)
        took = time.monotonic() - t0
    record = json.loads(out.read_text().splitlines()[0])
    print(f"\n503 with retry-after 20 s, 6 retries allowed, --timeout 4: {record['status']} after {record['wall_time_s']} s, "
          f"{len(seen)} requests; the run took {took:.1f} s")
    assert record["status"] == "timeout", (record, done.stderr)
    assert record["wall_time_s"] < 20, "the question waited out a 20 s backoff past its 4 s budget"
