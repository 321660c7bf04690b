"""The sessions' checkpointers rebuild only known types: a checkpoint naming `os.mkdir`, written into the PostgreSQL
checkpoints table as a team deployment shares it, is refused on the session's next question and never called."""
import asyncio, os
import pytest

import ormsgpack

from crafted_checkpoint import evil_call


@pytest.mark.security
def test_a_crafted_checkpoint_in_postgres_is_refused(pg_url, tmp_path):
    "A checkpoint naming os.mkdir written into the PostgreSQL checkpoints table: the session's next question is refused."
    import psycopg
    from gaia_mas.core.pg_server import fresh_database
    from gaia_mas.rag.workflows.system import open_sessions, scripted_system
    target = tmp_path/"pwned"
    async def ask(url):
        async with open_sessions(url) as saver: return await scripted_system(saver).aask("What is a bulkhead?", "breaker")
    with fresh_database(pg_url, f"serde_{os.getpid()}") as url:
        assert asyncio.run(ask(url))["answer"]
        with psycopg.connect(url, autocommit=True) as db:
            n = db.execute("UPDATE checkpoint_blobs SET type = 'msgpack', blob = %s WHERE channel = 'history'",
                           (ormsgpack.packb(evil_call(target)),)).rowcount  # PostgreSQL keeps channel values apart
        assert n > 0
        try: asyncio.run(ask(url)); refused = None
        except ValueError as e: refused = e
    assert not target.exists(), "a stored checkpoint ran os.mkdir"
    assert type(refused).__name__ == "UnsafeCheckpoint" and "os.mkdir" in str(refused), refused


@pytest.mark.process
@pytest.mark.security
def test_serve_reports_a_damaged_session_and_answers_the_others(tmp_path):
    "`serve`: a session whose checkpoint names os.mkdir is a 409 naming it as damaged; other sessions still answer."
    import httpx
    from crafted_checkpoint import plant
    from rag_serve import serve
    target, kb = tmp_path/"pwned", tmp_path/"kb.sqlite"
    ask = lambda c, sid: c.post("/multiagent/chat", json={"question": "What is a bulkhead?", "session_id": sid})
    with serve("--kb", f"sqlite:///{kb}", "--embeddings", "hash", env={"GAIA_MAS_CACHE": str(tmp_path/"cache")}) \
            as (url, proc, lines), httpx.Client(base_url=url, timeout=120) as c:
        assert ask(c, "breaker").status_code == 200
        assert plant(tmp_path/"sessions.sqlite", target) > 0
        r = ask(c, "breaker")
        assert r.status_code == 409 and "damaged" in r.json()["error"] and "os.mkdir" in r.json()["error"], r.text
        assert ask(c, "another").status_code == 200
    assert not target.exists(), "a stored checkpoint ran os.mkdir"
