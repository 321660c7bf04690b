"""One set of request rules on every way in: a question with control characters, a question over 4,000 characters, a
blank one, a malformed session id and a flag that is not JSON's true or false are refused alike by `/multiagent/*`
(422), `/v1/chat/completions` (400, in OpenAI's shape, with the rule's code) and `RagSystem.ask` (ValueError), through a
real server on loopback; good text (tabs, line breaks, emoji, any script) passes all three."""
import json
import httpx, pytest

from gaia_mas.core.testing import LiveServer
from gaia_mas.rag.service.app import create_app
from gaia_mas.rag.workflows.system import scripted_system

pytestmark = pytest.mark.security

BAD_QUESTIONS = {"nul": "What is\x00 a breaker?", "escape": "\x1b[2J\x1b[1;1HWhat is a breaker?",
                 "delete": "What\x7f is a breaker?", "c1": "What\x85 is a breaker?",
                 "surrogate": "What is a breaker?\ud800", "too_long": "x" * 4001, "blank": " \n\t "}
GOOD = "What is a circuit breaker?\n\tAnd a bulkhead? 👩‍💻 مرحبا"


@pytest.fixture(scope="module")
def system():
    return scripted_system()


@pytest.fixture(scope="module")
def server(system):
    with LiveServer(create_app(system)) as url:
        with httpx.Client(base_url=url, timeout=60) as c: yield c


def post(c, path, body):
    "POST `body` as ASCII JSON (escapes such as a lone surrogate's travel as a client may send them)."
    return c.post(path, content=json.dumps(body), headers={"content-type": "application/json"})


def multiagent(c, question, **extra):
    return post(c, "/multiagent/sequential/chat", {"question": question, **extra})


def v1(c, question, **extra):
    return post(c, "/v1/chat/completions", {"model": "sequential", **extra,
                                            "messages": [{"role": "user", "content": question}]})


@pytest.mark.parametrize("kind", BAD_QUESTIONS)
def test_a_bad_question_is_refused_by_both_apis_and_the_system(server, system, kind):
    q = BAD_QUESTIONS[kind]
    r = multiagent(server, q)
    assert r.status_code == 422 and "question" in r.json()["error"], (kind, r.text)
    r = v1(server, q)
    assert r.status_code == 400, (kind, r.status_code, r.text[:300])
    err = r.json()["error"]
    assert err["type"] == "invalid_request_error" and err["code"] in (
        "invalid_characters", "question_too_long", "empty_question"), err
    with pytest.raises(ValueError, match="question"): system.ask(q, "s1", "sequential")


def test_the_same_refusal_reads_the_same(server):
    "The message a client reads names the same rule on both APIs."
    a = " ".join(str(d.get("msg")) for d in multiagent(server, BAD_QUESTIONS["nul"]).json()["detail"])
    b = v1(server, BAD_QUESTIONS["nul"]).json()["error"]["message"]
    assert "control characters" in a and "control characters" in b


def test_an_earlier_message_with_control_characters_is_refused(server):
    msgs = [{"role": "user", "content": "hi\x00"}, {"role": "assistant", "content": "hello"},
            {"role": "user", "content": "What is a circuit breaker?"}]
    r = server.post("/v1/chat/completions", json={"model": "sequential", "messages": msgs})
    assert r.status_code == 400 and "message 1" in r.json()["error"]["message"]


@pytest.mark.parametrize("value", ["yes", "true", 1, "false"])
def test_a_flag_must_be_true_or_false(server, value):
    r = v1(server, "What is a circuit breaker?", stream=value)
    assert r.status_code == 400 and "stream" in r.json()["error"]["message"], r.text[:300]
    r = server.post("/multiagent/chat", json={"question": "What is a circuit breaker?", "auto_select_pattern": value})
    assert r.status_code == 422 and "auto_select_pattern" in r.json()["error"]


@pytest.mark.parametrize("sid", ["../etc/passwd", "a b", "x" * 129])
def test_a_bad_session_id_is_refused_by_both_apis_and_the_system(server, system, sid):
    assert multiagent(server, "What is a circuit breaker?", session_id=sid).status_code == 422
    r = v1(server, "What is a circuit breaker?", metadata={"session_id": sid})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_session_id"
    with pytest.raises(ValueError, match="session_id"): system.ask("What is a circuit breaker?", sid, "sequential")


def test_good_text_passes_everywhere(server, system):
    assert multiagent(server, GOOD).status_code == 200
    assert v1(server, GOOD).status_code == 200
    assert v1(server, GOOD, stream=True).status_code == 200
    assert system.ask(GOOD, "s2", "sequential")["answer"]
