"""The RAG service through a real uvicorn server on a free loopback port: every endpoint, sessions, streaming, keys,
bad requests, internal failures, a schemathesis fuzz of the OpenAPI schema and 50 concurrent requests.

The system behind the server is the real one (`make_rag_system(provider="scripted")`): the three workflows on the
sample knowledge base with the scripted model, offline (`scripted_system`)."""
import asyncio, json, time
import httpx, pytest

from gaia_mas.rag.workflows.served import SystemBase
from gaia_mas.core.testing import LiveServer
from loopback import TLS
from gaia_mas.rag.service.app import create_app
from gaia_mas.rag.workflows.system import scripted_system

PATTERNS = ("sequential", "parallel", "supervisor")
CHAT = [f"/multiagent/{p}/chat" for p in PATTERNS] + ["/multiagent/chat"]
Q = "What is a circuit breaker?"
KEY = "test-key-123"

def scripted(latency:float=0.0):
    "A factory: the real system with the scripted model, its sessions in the server's checkpointer."
    return lambda saver: scripted_system(saver, latency=latency)

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    "One live server for the module, sessions in SQLite, with an API key."
    sessions = f"sqlite:///{tmp_path_factory.mktemp('sessions')}/sessions.sqlite"
    with LiveServer(create_app(scripted(), api_key=KEY, sessions=sessions)) as url: yield url

@pytest.fixture
def client(server):
    with httpx.Client(base_url=server, headers={"X-API-Key": KEY}, timeout=60, verify=TLS) as c: yield c

def events(text:str) -> list[tuple[str, dict]]:
    "The (event, data) pairs of a server-sent-events body."
    out = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        out.append((fields.get("event"), json.loads(fields.get("data", "null"))))
    return out

# --- endpoints -------------------------------------------------------------------------------------------

SPEC_FIELDS = {"sequential": {"answer", "pattern", "metadata", "session_id"},
               "parallel": {"answer", "pattern", "selected_agent", "evaluation_scores", "metadata", "session_id"},
               "supervisor": {"answer", "pattern", "supervisor_plan", "workers_used", "metadata", "session_id"}}

@pytest.mark.parametrize("pattern", PATTERNS)
def test_pattern_endpoints_answer_with_the_spec_fields(client, pattern):
    r = client.post(f"/multiagent/{pattern}/chat", json={"question": Q, "session_id": f"fields-{pattern}"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert SPEC_FIELDS[pattern] <= set(body) and body["pattern"] == pattern and body["session_id"] == f"fields-{pattern}"
    assert body["answer"] and body["citations"] and isinstance(body["metadata"]["total_time"], float)
    assert r.headers["x-request-id"]

def test_auto_select_says_why_and_the_client_can_choose(client):
    body = client.post("/multiagent/chat", json={"question": Q, "session_id": "auto-1", "auto_select_pattern": True}).json()
    assert body["pattern"] in PATTERNS and body["pattern_selection_reasoning"]
    chosen = client.post("/multiagent/chat", json={"question": Q, "auto_select_pattern": False, "pattern": "supervisor"}).json()
    assert chosen["pattern"] == "supervisor" and chosen["workers_used"]

def test_docs_and_health_are_open(server):
    "The OpenAPI description and /health answer with no key; /docs and /redoc (scripts from a CDN) are off."
    assert [httpx.get(f"{server}{p}", timeout=10).status_code for p in ("/docs", "/redoc")] == [404, 404]
    schema = httpx.get(f"{server}/openapi.json", timeout=10).json()
    assert {f"{p}/stream" for p in CHAT} | set(CHAT) <= set(schema["paths"])
    health = httpx.get(f"{server}/health", timeout=30)
    assert health.status_code == 200 and health.json()["status"] == "ok" and health.json()["sessions"] == "sqlite"

# --- sessions --------------------------------------------------------------------------------------------

def test_a_follow_up_sees_the_previous_turn_and_sessions_are_isolated(client):
    "'it' in the follow-up is the bulkhead of session a's first turn; fresh sessions b and c see nothing of a."
    ask = lambda q, s: client.post("/multiagent/sequential/chat", json={"question": q, "session_id": s}).json()
    ask("What is a bulkhead?", "cont-a")
    a, b, c = (ask("How should I size it?", s) for s in ("cont-a", "cont-b", "cont-c"))
    assert a["citations"][0].startswith("bulkheads.md"), a
    assert b["answer"] == c["answer"] and a["answer"] != b["answer"]
    assert not b["citations"][0].startswith("bulkheads.md"), b

# --- streaming -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", CHAT)
def test_streaming_reports_each_node_then_the_answer(client, path):
    with client.stream("POST", f"{path}/stream", json={"question": Q, "session_id": "stream-1"}) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        evs = events(r.read().decode())
    kinds = [k for k, _ in evs]
    assert kinds[-1] == "answer" and kinds.count("answer") == 1 and kinds.count("node") >= 2, kinds
    assert all(d["node"] for k, d in evs if k == "node")
    assert evs[-1][1]["answer"] and evs[-1][1]["session_id"] == "stream-1"

# --- keys, bad requests, failures ------------------------------------------------------------------------

@pytest.mark.parametrize("headers", [{}, {"X-API-Key": "wrong"}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic dGVzdA=="}])
def test_a_missing_or_wrong_key_is_a_401(server, headers):
    r = httpx.post(f"{server}/multiagent/sequential/chat", json={"question": Q}, headers=headers, timeout=10, verify=TLS)
    assert r.status_code == 401 and "API key" in r.json()["error"] and r.json()["request_id"] == r.headers["x-request-id"]

def test_the_bearer_header_works_too(server):
    r = httpx.post(f"{server}/multiagent/sequential/chat", json={"question": Q}, headers={"Authorization": f"Bearer {KEY}"}, timeout=60)
    assert r.status_code == 200

BAD = [({"question": ""}, "question"), ({"question": "   "}, "question"), ({"question": "x" * 4001}, "question"),
       ({"question": 42}, "question"), ({}, "question"), ({"question": Q, "session_id": "has space"}, "session_id"),
       ({"question": Q, "session_id": 7}, "session_id"), ({"question": Q, "sesion_id": "typo"}, "sesion_id"),
       ({"question": "a\x00b"}, "question")]

@pytest.mark.parametrize("body,field", BAD)
def test_bad_requests_are_a_422_naming_the_field(client, body, field):
    r = client.post("/multiagent/sequential/chat", json=body)
    assert r.status_code == 422 and field in r.json()["error"], r.text

@pytest.mark.parametrize("body,field", [({"question": Q, "auto_select_pattern": False}, "pattern"),
                                        ({"question": Q, "auto_select_pattern": False, "pattern": "fastest"}, "pattern"),
                                        ({"question": Q, "auto_select_pattern": "yes"}, "auto_select_pattern")])
def test_auto_endpoint_bad_requests(client, body, field):
    r = client.post("/multiagent/chat", json=body)
    assert r.status_code == 422 and field in r.json()["error"], r.text

def test_malformed_json_and_oversized_bodies(client):
    assert client.post("/multiagent/sequential/chat", content=b"{not json", headers={"content-type": "application/json"}).status_code == 422
    assert client.post("/multiagent/sequential/chat", content=b"x" * 70_000, headers={"content-type": "application/json"}).status_code == 413

class Broken(SystemBase):
    "A system that fails inside: its error must not reach the client."
    provider = "broken"
    async def aask(self, question, session_id, pattern): raise RuntimeError("password=hunter2 in a stack trace")
    async def astream(self, question, session_id, pattern):
        yield {"event": "node", "node": "research"}
        raise RuntimeError("password=hunter2 in a stack trace")

def test_an_internal_failure_is_a_json_500_with_a_request_id_and_the_server_lives_on(caplog):
    with LiveServer(create_app(Broken())) as url, httpx.Client(base_url=url, timeout=10) as c:
        for _ in range(3):
            r = c.post("/multiagent/parallel/chat", json={"question": Q})
            assert r.status_code == 500 and r.json()["request_id"] == r.headers["x-request-id"]
            assert "hunter2" not in r.text and "Traceback" not in r.text
        evs = events(c.post("/multiagent/sequential/chat/stream", json={"question": Q}).text)
        assert [k for k, _ in evs] == ["node", "error"] and evs[-1][1]["request_id"] and "hunter2" not in json.dumps(evs)
        assert c.get("/health").status_code == 200
    assert r.json()["request_id"] in caplog.text  # the log has the id, beside the traceback

# --- fuzz and load ---------------------------------------------------------------------------------------

@pytest.mark.slow  # hundreds of requests: 20 s alone, minutes on a busy machine
def test_schemathesis_fuzz_finds_no_server_error(server):
    "Property-based fuzz of every operation of the OpenAPI schema, positive and negative data, fixed seed: no 5xx."
    from fuzz import fuzz_for_5xx
    ops, calls, failures = fuzz_for_5xx(server, KEY, 50)
    assert calls >= 50 * 8 * 0.5 and not failures, failures
    print(f"schemathesis: {calls} requests over {ops} operations, no 5xx")

def test_fifty_concurrent_requests_across_the_endpoints_all_succeed(tmp_path):
    "50 requests at once, spread over the eight chat endpoints, with 0.05 s per scripted LLM call: every one a 200 with an answer."
    async def go(url):
        async with httpx.AsyncClient(base_url=url, timeout=120, limits=httpx.Limits(max_connections=60)) as c:
            paths = [(CHAT + [f"{p}/stream" for p in CHAT])[i % 8] for i in range(50)]
            return await asyncio.gather(*(c.post(p, json={"question": Q, "session_id": f"load-{i}"}) for i, p in enumerate(paths)))
    with LiveServer(create_app(scripted(latency=0.05), sessions=f"sqlite:///{tmp_path}/s.sqlite")) as url:
        t0 = time.monotonic(); rs = asyncio.run(go(url)); wall = time.monotonic() - t0
    print(f"load: 50 concurrent requests over 8 endpoints, statuses {sorted({r.status_code for r in rs})}, {wall:.1f}s in all")
    assert [r.status_code for r in rs] == [200] * 50
    assert all(r.json()["answer"] if "stream" not in str(r.url) else events(r.text)[-1][0] == "answer" for r in rs)
