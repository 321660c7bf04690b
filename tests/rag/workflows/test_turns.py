"""One order for one session across hosts, on PostgreSQL: two `TurnQueue`s with `PgTurnLocks` on one database stand
for two hosts (they share no folder and no memory lock); the turns a session takes never overlap and run in the order
they arrived, a turn reaching the other host meanwhile is refused with `SessionBusy`; a host that dies holding a
session frees it at once; a process holds all its sessions' locks on one connection."""
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


async def _arrivals(q, n:int) -> tuple[list[int], list[int]]:
    "`n` turns of one session arriving in order, each reading the history, working a moment and writing it back."
    hist, refused = [], []
    async def turn(i):
        await asyncio.sleep(0.005 * i)
        try:
            async with q.turn("shared"):
                seen = list(hist); await asyncio.sleep(0.02); hist[:] = seen + [i]
        except SessionBusy: refused.append(i)
    await asyncio.gather(*(turn(i) for i in range(n)))
    return hist, refused


def test_two_hosts_take_a_session_in_arrival_order(db):
    async def go():
        hosts = _Hosts(db)
        try: return await _arrivals(hosts, 16)
        finally: await hosts.close()
    taken, refused = asyncio.run(go())
    assert sorted(taken + refused) == list(range(16)), "a turn was lost: two ran at once on different hosts"
    assert taken == sorted(taken), f"the turns were stored out of their arrival order: {taken}"
    assert refused, "no turn reached the other host while the first had the session"


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
                while time.monotonic() - t0 < 30:  # the server notices the dead connection, then the turn is taken
                    try:
                        async with q.turn("held"): return time.monotonic() - t0
                    except SessionBusy: await asyncio.sleep(0.05)
                return float("inf")
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


def _colliding_ids() -> tuple[str, str]:
    "Two session ids whose SHA-256 digests share their first 16 bits (a few hundred tries, by the birthday bound)."
    import hashlib
    seen = {}
    for i in range(1_000_000):
        sid = f"victim-{i}"; head = hashlib.sha256(sid.encode()).hexdigest()[:4]
        if head in seen: return seen[head], sid
        seen[head] = sid
    raise AssertionError("no collision found")


def test_sessions_whose_hashes_share_a_prefix_do_not_wait_for_each_other(tmp_path):
    "A client that searches for a session id near another's gets its own lock: the other's turn never waits on it."
    from gaia_mas.rag.workflows.turns import FileTurnLocks
    mine, theirs = _colliding_ids()
    async def go():
        a, b = FileTurnLocks(tmp_path), FileTurnLocks(tmp_path)
        async with a.hold(theirs):
            try:
                async with b.hold(mine, time.monotonic() + 0.2): return "apart"
            except TimeoutError: return "waited for another session's turn"
    assert asyncio.run(go()) == "apart"
