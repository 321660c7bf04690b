"""One turn at a time per session across hosts, on PostgreSQL: two `TurnQueue`s with `PgTurnLocks` on one database stand
for two hosts (they share no folder and no memory lock); their turns of one session never overlap; a host that dies
holding a session frees it at once; a process holds all its sessions' locks on one connection; a turn that waits too
long is refused with `SessionBusy`."""
import asyncio, os, signal, subprocess, sys, time
import pytest

from gaia_mas.core.pg_server import fresh_database

from gaia_mas.rag.workflows.turns import PgTurnLocks, SessionBusy, TurnQueue, turn_queue


@pytest.fixture
def db(pg_url):
    with fresh_database(pg_url, f"locks_{os.getpid()}") as url: yield url


class _Hosts:
    "Turns alternating between two hosts' queues."
    def __init__(self, url): self.qs, self.n = [turn_queue(url), turn_queue(url)], 0
    def turn(self, s): self.n += 1; return self.qs[self.n % 2].turn(s)
    async def close(self):
        for q in self.qs: await q.across.aclose()


async def _read_work_write(q, n:int) -> list[int]:
    "`n` turns of one session at once, each reading the history, working a moment and writing it back."
    hist = []
    async def turn(i):
        async with q.turn("shared"):
            seen = list(hist); await asyncio.sleep(0.01); hist[:] = seen + [i]
    await asyncio.gather(*(turn(i) for i in range(n)))
    return hist


def test_two_hosts_never_run_a_session_at_once(db):
    async def go():
        hosts = _Hosts(db)
        try: return await _read_work_write(hosts, 16)
        finally: await hosts.close()
    assert sorted(asyncio.run(go())) == list(range(16)), "a turn was lost: two ran at once on different hosts"


_HOLDER = """
import asyncio, sys
from gaia_mas.rag.workflows.turns import turn_queue
async def main():
    async with turn_queue(sys.argv[1]).turn("held"):
        print("held", flush=True); await asyncio.sleep(600)
asyncio.run(main())
"""

def test_a_dead_host_frees_its_sessions_at_once(db):
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, db], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        async def busy_then_free():
            q = TurnQueue(PgTurnLocks(db), wait=0.3)
            try:
                with pytest.raises(SessionBusy, match="busy"):
                    async with q.turn("held"): pass
                holder.send_signal(signal.SIGKILL); t0 = time.monotonic()
                q.wait = 30
                async with q.turn("held"): return time.monotonic() - t0
            finally: await q.across.aclose()
        took = asyncio.run(busy_then_free())
        assert took < 30
    finally:
        holder.kill(); holder.wait()


def test_a_process_holds_all_its_locks_on_one_connection(db):
    import psycopg
    def connections():
        with psycopg.connect(db, autocommit=True) as c:
            return c.execute("select count(*) from pg_stat_activity where datname = current_database()"
                             " and pid <> pg_backend_pid()").fetchone()[0]
    async def go():
        q = turn_queue(db); held, release = asyncio.Event(), asyncio.Event()
        count = 0
        async def turn(i):
            nonlocal count
            async with q.turn(f"s{i}"):
                count += 1
                if count == 64: held.set()
                await release.wait()
        tasks = [asyncio.create_task(turn(i)) for i in range(64)]
        await asyncio.wait_for(held.wait(), 30)
        n = await asyncio.to_thread(connections)
        release.set(); await asyncio.gather(*tasks); await q.across.aclose()
        return n
    assert asyncio.run(go()) == 1
