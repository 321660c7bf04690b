"""The OpenAI-compatible routes through a real uvicorn server on loopback, driven by the official `openai` client and
LangChain's `ChatOpenAI`: models, plain and streamed answers, one and several turns, kept sessions, and every error.

The system behind the server is the real one: the three workflows on the sample knowledge base with the scripted model,
which streams its replies in pieces (`scripted_system`)."""
import json, time
import httpx, openai, pytest

from gaia_mas.core.testing import LiveServer
from loopback import TLS
from gaia_mas.rag.service.app import create_app
from gaia_mas.rag.workflows.system import scripted_system

KEY = "test-key-oai"
Q = "What is a circuit breaker?"
PATTERNS = ("sequential", "parallel", "supervisor", "auto")

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    sessions = f"sqlite:///{tmp_path_factory.mktemp('sessions')}/sessions.sqlite"
    with LiveServer(create_app(lambda saver: scripted_system(saver, latency=0.01), api_key=KEY, sessions=sessions)) as url: yield url

@pytest.fixture
def client(server):
    return openai.OpenAI(base_url=f"{server}/v1", api_key=KEY, max_retries=0, timeout=60,
                         http_client=openai.DefaultHttpxClient(verify=TLS))

def test_models_lists_the_patterns(client):
    assert [m.id for m in client.models.list()] == list(PATTERNS)

@pytest.mark.parametrize("pattern", PATTERNS)
def test_one_answer_with_usage_and_citations(client, pattern):
    r = client.chat.completions.create(model=pattern, messages=[{"role": "user", "content": Q}])
    assert r.object == "chat.completion" and r.model == pattern
    assert r.choices[0].message.role == "assistant" and "circuit breaker" in r.choices[0].message.content.lower()
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens > 0
    extra = r.model_extra
    assert extra["pattern"] in PATTERNS[:3]
    cit = extra["citations"][0]
    assert cit["source"].endswith(".md") and cit["section"] and 0 <= cit["start"] < cit["end"]

def test_usage_sums_every_agent_call(client):
    "Sequential runs at least research, analysis and synthesis: more tokens than any one call."
    one = client.chat.completions.create(model="sequential", messages=[{"role": "user", "content": Q}])
    assert one.usage.completion_tokens > len(one.choices[0].message.content) // 4

@pytest.mark.parametrize("pattern", PATTERNS)
def test_streamed_answer_matches_the_plain_one(client, pattern):
    chunks = list(client.chat.completions.create(model=pattern, messages=[{"role": "user", "content": Q}], stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    plain = client.chat.completions.create(model=pattern, messages=[{"role": "user", "content": Q}]).choices[0].message.content
    assert text == plain
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    last = chunks[-1]
    assert last.choices == [] and last.model_extra["citations"] and last.usage.total_tokens > 0

def test_sequential_streams_the_answer_in_many_chunks_before_it_ends(server):
    "The answer's tokens come as the synthesis agent writes them: several content chunks, then progress says 'finish'."
    body = {"model": "sequential", "stream": True, "messages": [{"role": "user", "content": Q}]}
    with httpx.stream("POST", f"{server}/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {KEY}"}, timeout=60) as r:
        lines = [l for l in r.iter_lines() if l]
    order = ["token" if l.startswith("data: {") and json.loads(l[6:]).get("choices") and json.loads(l[6:])["choices"][0]["delta"].get("content")
             else json.loads(l[len(": progress "):])["node"] if l.startswith(": progress") else "other" for l in lines]
    assert order.count("token") >= 5
    assert order.index("token") < order.index("finish")  # tokens came before the workflow finished
    assert lines[-1] == "data: [DONE]"

def test_several_turns_from_the_client_are_history(client):
    msgs = [{"role": "user", "content": Q}, {"role": "assistant", "content": "It stops calls to a failing service."},
            {"role": "user", "content": "How does it recover?"}]
    r = client.chat.completions.create(model="sequential", messages=msgs)
    alone = client.chat.completions.create(model="sequential", messages=msgs[-1:])
    text = r.choices[0].message.content.lower()
    assert "recover" in text and text != alone.choices[0].message.content.lower()  # the earlier turns changed the answer

def test_a_session_id_keeps_the_conversation_on_the_server(client):
    sid = f"oai-kept-{time.time_ns()}"
    client.chat.completions.create(model="sequential", messages=[{"role": "user", "content": Q}], metadata={"session_id": sid})
    r = client.chat.completions.create(model="sequential", messages=[{"role": "user", "content": "How does it recover?"}],
                                       extra_headers={"X-Session-ID": sid})
    assert r.model_extra["session_id"] == sid

def test_langchain_chat_openai_plain_and_streamed(server):
    from langchain_openai import ChatOpenAI
    llm = ChatOpenAI(model="sequential", base_url=f"{server}/v1", api_key=KEY, max_retries=0, timeout=60)
    plain = llm.invoke(Q)
    assert "circuit breaker" in plain.content.lower() and plain.usage_metadata["total_tokens"] > 0
    pieces = [c.content for c in llm.stream([("user", Q), ("assistant", "It stops calls."), ("user", "How does it recover?")])]
    assert sum(1 for p in pieces if p) > 3 and "".join(pieces).strip()

# --- errors -----------------------------------------------------------------------------------------------

def test_wrong_or_missing_key_is_401_in_openai_shape(server):
    for key in ("wrong", None):
        c = openai.OpenAI(base_url=f"{server}/v1", api_key=key or "x", max_retries=0,
                          default_headers={} if key else {"Authorization": ""})
        with pytest.raises(openai.AuthenticationError) as e: c.models.list()
        assert e.value.status_code == 401 and e.value.body["code"] == "invalid_api_key"
        assert e.value.body["type"] == "authentication_error"  # clients that read the type (litellm) see the same
    r = httpx.post(f"{server}/v1/chat/completions", json={"model": "auto", "messages": [{"role": "user", "content": Q}]})
    assert r.status_code == 401 and set(r.json()["error"]) == {"message", "type", "code"}

def test_unknown_model_is_404_model_not_found(client):
    with pytest.raises(openai.NotFoundError) as e:
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": Q}])
    assert e.value.body["code"] == "model_not_found" and "sequential" in e.value.body["message"]

@pytest.mark.parametrize("messages", [[], [{"role": "system", "content": "hi"}], [{"role": "user", "content": "   "}]])
def test_empty_messages_or_no_user_turn_is_400(client, messages):
    with pytest.raises(openai.BadRequestError) as e: client.chat.completions.create(model="auto", messages=messages)
    assert e.value.status_code == 400 and e.value.body["type"] == "invalid_request_error"

def test_streamed_errors_come_before_the_stream(client):
    with pytest.raises(openai.NotFoundError):
        list(client.chat.completions.create(model="nope", messages=[{"role": "user", "content": Q}], stream=True))

def test_a_long_conversation_is_answered_and_an_oversized_one_is_413_with_advice(client):
    turn = [{"role": "user", "content": "x" * 40_000}, {"role": "assistant", "content": "noted"}]
    long = client.chat.completions.create(model="sequential", messages=turn * 20 + [{"role": "user", "content": Q}])
    assert long.choices[0].message.content  # 800 kB of history: over the other routes' 64,000 bytes, answered here
    with pytest.raises(openai.APIStatusError) as e:
        client.chat.completions.create(model="auto", messages=turn * 30 + [{"role": "user", "content": Q}])
    assert e.value.status_code == 413 and e.value.body["code"] == "request_too_large"
    assert "over 1000000 bytes" in e.value.message and "session_id" in e.value.message

def test_max_tokens_cuts_the_answer_plain_and_streamed(client):
    from gaia_mas.rag.workflows.sessions import count_tokens
    r = client.chat.completions.create(model="sequential", messages=[{"role": "user", "content": Q}], max_tokens=5)
    assert r.choices[0].finish_reason == "length" and 0 < count_tokens(r.choices[0].message.content) <= 5
    chunks = list(client.chat.completions.create(model="sequential", messages=[{"role": "user", "content": Q}],
                                                 max_completion_tokens=5, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert 0 < count_tokens(text) <= 5 and [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "length"
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="sequential", messages=[{"role": "user", "content": Q}], max_tokens=0)

def test_one_model_is_retrieved(client):
    assert [client.models.retrieve(m).id for m in PATTERNS] == list(PATTERNS)
    with pytest.raises(openai.NotFoundError) as e: client.models.retrieve("gpt-4o")
    assert e.value.body["code"] == "model_not_found"

def test_the_service_endpoints_still_answer(server):
    r = httpx.post(f"{server}/multiagent/sequential/chat", json={"question": Q}, headers={"X-API-Key": KEY}, timeout=60)
    assert r.status_code == 200 and r.json()["answer"]
