"""Conversations and stores under stress, in process: twenty concurrent turns on one session all kept, in order; a
knowledge base with broken tables and a broken sessions store give 503s naming the part, never an "answer"."""
import asyncio, shutil, sqlite3
import httpx, pytest

from gaia_mas.rag.service.app import create_app
from gaia_mas.rag.workflows.system import make_rag_system, open_sessions

pytestmark = pytest.mark.security

Q = "What is a circuit breaker?"


def _client(app): return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://service", timeout=120)


@pytest.fixture
def kb_copy(tmp_path):
    from gaia_mas.rag.kb.ingest import sample_kb
    from gaia_mas.rag.kb.api import open_kb
    src = sample_kb(); path = tmp_path/"kb.sqlite"
    with sqlite3.connect(src.path) as a, sqlite3.connect(path) as b: a.backup(b)
    return open_kb(path)


def test_twenty_concurrent_turns_on_one_session_are_all_kept(kb_copy):
    async def go():
        system = make_rag_system(provider="scripted", latency=0.002, knowledge_base=kb_copy)
        system.history_turns, system.history_tokens = 100, 10**6  # keep every turn whole: none summarized
        async with _client(create_app(system)) as c:
            first = await c.post("/multiagent/sequential/chat", json={"question": Q, "session_id": "s1"})
            rs = await asyncio.gather(*(c.post("/multiagent/sequential/chat", json={"question": f"{Q} ({i})", "session_id": "s1"})
                                        for i in range(20)))
        return [first, *rs], await system.history("s1")
    rs, history = asyncio.run(go())
    print(f"21 turns on one session, 20 of them concurrent: {len(history)}/21 kept")
    assert [r.status_code for r in rs] == [200] * 21 and len(history) == 21
    asked = [t.get("question") for t in history]
    assert asked[0] == Q and sorted(asked[1:]) == sorted(f"{Q} ({i})" for i in range(20))


def test_broken_kb_tables_give_503_not_an_answer(kb_copy):
    async def go():
        system = make_rag_system(provider="scripted", knowledge_base=kb_copy)
        async with _client(create_app(system, probe_ttl=0)) as c:  # no reuse window: each turn probes the stores
            ok = await c.post("/multiagent/sequential/chat", json={"question": Q})
            db = sqlite3.connect(kb_copy.path); db.execute("drop table chunks"); db.commit(); db.close()
            kb_copy.close()  # the service's next read opens a fresh connection
            bad = await c.post("/multiagent/sequential/chat", json={"question": Q})
            stream = await c.post("/multiagent/sequential/chat/stream", json={"question": Q})
            health = await c.get("/health")
        return ok, bad, stream, health
    ok, bad, stream, health = asyncio.run(go())
    assert ok.status_code == 200
    assert bad.status_code == 503 and "knowledge base" in bad.json()["error"] and "no such table" not in bad.text, bad.text
    assert "event: error" in stream.text and "knowledge base" in stream.text and "event: answer" not in stream.text
    assert health.status_code == 503 and "knowledge base" in health.json()["error"]


def test_broken_sessions_store_gives_503(kb_copy, tmp_path):
    async def go():
        async with open_sessions(f"sqlite:///{tmp_path}/sessions.sqlite") as saver:
            system = make_rag_system(provider="scripted", knowledge_base=kb_copy, checkpointer=saver)
            async with _client(create_app(system, probe_ttl=0)) as c:  # each turn probes the stores
                ok = (await c.get("/health")).status_code
                await saver.conn.execute("drop table checkpoints"); await saver.conn.commit()
                health = await c.get("/health")
                chat = await c.post("/multiagent/parallel/chat", json={"question": Q})
        return ok, health, chat
    ok, health, chat = asyncio.run(go())
    assert ok == 200 and health.status_code == 503 and "sessions store" in health.json()["error"], health.text
    assert chat.status_code == 503 and "sessions store" in chat.json()["error"], chat.text
