"""One redaction for every URL the project shows: a password planted in GAIA_MAS_KB (in the user-info, with and without a
user name, and as `password=` and `sslpassword=` query parameters) and in OPENAI_BASE_URL (`http://user:PASSWORD@...`)
reaches none of `gaia-mas config` (and `--json`), `rag stats --json`, `serve`'s start-up output and its `-v` log, the
access log (whatever a key parameter is called), a run's stderr, log file, results.jsonl and report.html, nor the
error naming the model server it cannot reach."""
import json, os, subprocess
from urllib.parse import urlsplit
import httpx, pytest

from cli_support import GAIA, cli_env
from gaia_mas.core.pg_server import fresh_database, free_port, pg_missing, postgres_server
from gaia_mas.core.testing import FakeOpenAIServer
from rag_serve import SERVE

PLANTED = ["PLANTED-userinfo", "PLANTED-nouser", "PLANTED-query", "PLANTED-ssl", "PLANTED-gateway", "PLANTED-key"]
GATEWAY = "http://gw-user:PLANTED-gateway@127.0.0.1:{port}/v1"


@pytest.fixture(scope="module")
def pg_url():
    "A PostgreSQL server with pgvector on 127.0.0.1 for this file's tests."
    if why := pg_missing(): pytest.skip(why)
    with postgres_server() as url: yield url


def _clean(text:str, where:str) -> None:
    leaked = [p for p in PLANTED if p in text]
    assert not leaked, f"{where} shows {leaked}:\n{text[-3000:]}"


def _kb_url(pg_url:str, db:str) -> str:
    "A knowledge base URL on the test server's database `db`, with passwords in every place a URL can hold one."
    u = urlsplit(pg_url)
    return (f"postgresql://{u.username or 'postgres'}:PLANTED-userinfo@{u.hostname}:{u.port}/{db}"
            f"?sslmode=disable&password=PLANTED-query&sslpassword=PLANTED-ssl")


def _run(*args, env:dict, timeout:float=300) -> subprocess.CompletedProcess:
    return subprocess.run([*GAIA, *map(str, args)], capture_output=True, text=True, env=env, timeout=timeout)


@pytest.mark.subprocess
def test_config_shows_no_password():
    env = cli_env(GAIA_MAS_KB="postgresql://:PLANTED-nouser@db:5432/kb?sslmode=require&password=PLANTED-query",
                  OPENAI_BASE_URL=GATEWAY.format(port=1))
    text, js = _run("config", env=env), _run("config", "--json", env=env)
    assert text.returncode == js.returncode == 0, text.stderr + js.stderr
    assert "GAIA_MAS_KB" in text.stdout and "db:5432/kb" in text.stdout and "sslmode=require" in text.stdout
    _clean(text.stdout + text.stderr, "gaia-mas config"); _clean(js.stdout + js.stderr, "gaia-mas config --json")


@pytest.mark.postgres
@pytest.mark.process
def test_stats_and_serve_show_no_password(pg_url, tmp_path):
    with fresh_database(pg_url, f"redact_{os.getpid()}") as db:
        kb = _kb_url(pg_url, urlsplit(db).path.lstrip("/"))
        env = cli_env(GAIA_MAS_KB=kb, HOME=str(tmp_path), OPENAI_API_KEY="sk-test")
        stats = _run("rag", "stats", "--json", env=env)
        assert stats.returncode == 0, stats.stderr
        assert "password=***" in stats.stdout, stats.stdout
        _clean(stats.stdout + stats.stderr, "rag stats --json")
        with FakeOpenAIServer(responder=lambda req: "Circuit breakers stop calls to a failing service.") as model:
            port = free_port()
            proc = subprocess.Popen([*SERVE, "--provider", "openai", "--model", "fake", "--port", str(port), "-v",
                                     "--workers", "1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    env={**env, "OPENAI_BASE_URL": GATEWAY.format(port=urlsplit(model.base_url).port)},
                                    start_new_session=True)
            try:
                url = f"http://127.0.0.1:{port}"
                for _ in range(300):
                    try:
                        if httpx.get(f"{url}/health", timeout=5).status_code in (200, 503): break
                    except httpx.HTTPError:
                        if proc.poll() is not None: break
                        import time; time.sleep(0.3)
                asked = httpx.post(f"{url}/multiagent/sequential/chat", json={"question": "What is a breaker?"},
                                   timeout=120)
                keyed = httpx.get(f"{url}/kb/documents", params={"auth": "PLANTED-key", "page": "1"}, timeout=30)
                assert keyed.status_code in (200, 400), keyed.text
                _clean(asked.text, "a chat answer")
                assert model.requests, "the model server was never asked"
            finally:
                proc.terminate()
                out = proc.communicate(timeout=60)[0]
    assert "/kb/documents?auth=***" in out, out[-3000:]
    _clean(out, "serve -v (start-up line, log records, access log)")


def _tasks(tmp_path):
    tasks = tmp_path/"tasks.jsonl"
    tasks.write_text(json.dumps({"task_id": "t1", "Question": "What is 2 + 2?", "Level": 1}) + "\n")
    return tasks


@pytest.mark.subprocess
def test_a_run_keeps_the_gateway_password_out_of_its_outputs(tmp_path):
    "A model server that cannot be reached (its error) and one that answers 400 (httpx's request lines in the log)."
    for name, port, server in (("down", free_port(), None), ("up", None, FakeOpenAIServer(
            responder=lambda req: {"status": 400, "error": "this fake answers nothing"}))):
        with server or FakeOpenAIServer() as srv:
            base = GATEWAY.format(port=port or urlsplit(srv.base_url).port)
            out = tmp_path/f"{name}.jsonl"
            env = cli_env(OPENAI_BASE_URL=base, OPENAI_API_KEY="sk-test", HOME=str(tmp_path))
            r = _run("run", _tasks(tmp_path), "--out", out, "--model", "fake", "--no-progress", "--max-retries", "0",
                     "--cache-dir", tmp_path/"cache", env=env, timeout=600)
            assert out.exists(), r.stderr
            report = _run("report", out, "--html", tmp_path/f"{name}.html", env=env)
            assert report.returncode == 0, report.stderr
        logs = "".join(p.read_text() for p in (tmp_path/"cache"/"logs").rglob("*.jsonl"))
        for text, where in ((r.stdout + r.stderr, "the run's output"), (out.read_text(), "results.jsonl"),
                            ((tmp_path/f"{name}.html").read_text(), "report.html"), (logs, "the run's log")):
            _clean(text, f"{where} ({name})")
        if name == "down": assert "cannot reach the model server at http://gw-user:***@" in out.read_text()
        else: assert "HTTP Request" in logs and "gw-user:***@" in logs, logs[-2000:]
