"""Named clients against `gaia-mas serve --keys FILE` as a real process: a conversation belongs to the client that
started it (another client gets a 404, also when it replays a recorded turn with its `Idempotency-Key`, streams it or
names it through the OpenAI API), a read-only client searches and asks but cannot upload or delete (403), the
knowledge base is shared, and the keys never reach the server's output or a response."""
import json
import httpx, pytest

from rag_serve import serve

pytestmark = [pytest.mark.security, pytest.mark.process]
KEYS = {"alice": "alice-key-0123456789abcdef", "bob": "bob-key-0123456789abcdef", "reader": "reader-key-0123456789abcdef"}
Q = "What is a circuit breaker?"


def h(name:str, **extra) -> dict: return {"Authorization": f"Bearer {KEYS[name]}", **extra}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    "`gaia-mas serve --keys FILE` on its own knowledge base: (base URL, output lines)."
    home = tmp_path_factory.mktemp("home")
    keys = home/"clients.keys"
    keys.write_text("# name  key  rights\n" + "".join(f"{n} {k}{' read-only' if n == 'reader' else ''}\n"
                                                      for n, k in KEYS.items()))
    keys.chmod(0o644)  # readable by others: serve warns
    with serve("--kb", str(home/"kb.sqlite"), "--embeddings", "hash", "--keys", str(keys),
               env={"HOME": str(home), "GAIA_MAS_API_KEY": ""}) as (url, _, lines):
        yield url, lines


def chat(url:str, who:str, session:str="breaker", path:str="/multiagent/sequential/chat", **headers) -> httpx.Response:
    return httpx.post(f"{url}{path}", json={"question": Q, "session_id": session}, headers=h(who, **headers), timeout=60)


def test_another_client_cannot_read_or_replay_a_conversation(server):
    url, _ = server
    first = chat(url, "alice", **{"Idempotency-Key": "turn-1"})
    assert first.status_code == 200, first.text
    assert chat(url, "alice", **{"Idempotency-Key": "turn-1"}).json()["metadata"] == {"replayed": True}
    for r in (chat(url, "bob", **{"Idempotency-Key": "turn-1"}), chat(url, "bob"), chat(url, "reader"),
              chat(url, "bob", path="/multiagent/chat"),
              chat(url, "bob", path="/multiagent/sequential/chat/stream", **{"Idempotency-Key": "turn-1"})):
        assert r.status_code == 404 and "belongs to the client" in r.json()["error"], r.text
        assert first.json()["answer"] not in r.text
    oai = httpx.post(f"{url}/v1/chat/completions", headers=h("bob", **{"Idempotency-Key": "turn-1"}), timeout=60,
                     json={"model": "sequential", "messages": [{"role": "user", "content": Q}],
                           "metadata": {"session_id": "breaker"}})
    assert oai.status_code == 404 and first.json()["answer"] not in oai.text, oai.text
    assert chat(url, "bob", session="bobs-own").status_code == 200  # a session of its own is fine
    assert chat(url, "alice").status_code == 200  # and the owner goes on


def test_a_read_only_client_searches_and_asks_but_cannot_change_the_kb(server):
    url, _ = server
    doc = {"files": ("shared.md", b"# Bulkheads\n\nA bulkhead isolates the resources of each dependency.\n")}
    up = httpx.post(f"{url}/kb/documents", files=doc, headers=h("alice"), timeout=60)
    assert up.status_code == 201, up.text
    refused = httpx.post(f"{url}/kb/documents", files={"files": ("mine.md", b"# Mine\n\nNotes.\n")},
                         headers=h("reader"), timeout=60)
    assert refused.status_code == 403 and "read-only" in refused.json()["error"], refused.text
    gone = httpx.delete(f"{url}/kb/documents", params={"source": "uploads/shared.md"}, headers=h("reader"), timeout=60)
    assert gone.status_code == 403 and "read-only" in gone.json()["error"], gone.text
    listed = httpx.get(f"{url}/kb/documents", headers=h("reader"), timeout=30).json()
    assert [d["source"] for d in listed["documents"]] == ["uploads/shared.md"]  # the knowledge base is shared
    hits = httpx.get(f"{url}/kb/search", params={"q": "bulkhead", "mode": "keyword"}, headers=h("reader"), timeout=30)
    assert hits.status_code == 200 and hits.json()["hits"], hits.text
    assert chat(url, "reader", session="readers-own").status_code == 200


def test_keys_stay_secret(server):
    url, lines = server
    assert httpx.get(f"{url}/kb/documents", headers={"Authorization": "Bearer alice-key-0123456789abcdeX"},
                     timeout=30).status_code == 401
    bodies = [chat(url, n, session=f"{n}-secret").text for n in KEYS]
    assert all(k not in b for k in KEYS.values() for b in bodies)
    assert not any(k in line for k in KEYS.values() for line in lines), "a key reached the server's output"
    assert any("readable by other users" in line and "chmod 600" in line for line in lines)


@pytest.mark.parametrize("text,env,why", [
    ("alice short\n", {}, "line 1: the key is shorter than 16"),
    ("alice alice-key-0123456789abcdef admin\n", {}, "NAME KEY read-only"),
    ("alice alice-key-0123456789abcdef\n", {"GAIA_MAS_API_KEY": "one-key"}, "not both"),
])
def test_a_bad_keys_file_stops_serve_with_one_clear_line(tmp_path, text, env, why):
    import subprocess, sys, os
    from rag_serve import SERVE
    (tmp_path/"k").write_text(text)
    r = subprocess.run([*SERVE, "--provider", "scripted", "--kb", str(tmp_path/"kb.sqlite"), "--embeddings", "hash",
                        "--keys", str(tmp_path/"k"), "--port", "0"], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "HOME": str(tmp_path), "GAIA_MAS_API_KEY": "", "OPIK_TRACK_DISABLE": "true",
                            **env})
    assert r.returncode == 2 and why in r.stderr, r.stderr
    assert "alice-key" not in r.stderr + r.stdout
