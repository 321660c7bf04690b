"""Benchmark of the RAG service, side by side in one run (scripted models: no key, no network).

    python bench/rag_service.py                 # latency 0.2 s per LLM call
    python bench/rag_service.py --latency 0.1 --quick

1. Overlap: per pattern, the wall time of a request (in process) against the ideal, the LLM calls on the critical
   path x the latency. Within 1.2x means the parallel branches and the supervisor's workers really overlap.
2. Overhead: the framework's own time per request at zero latency, in process and through HTTP.
3. Load: a real `gaia-mas serve` process (uvicorn) and an httpx client: throughput and p50/p95 latency at 1, 8 and 32
   concurrent sessions, requests spread over the four chat endpoints.
4. Memory: the server process's RSS, sampled every 20 ms during the 32-session load: its peak and the increment per
   concurrent request, against the spec's 500 MB per request.
"""
import argparse, asyncio, contextlib, os, signal, socket, statistics, subprocess, sys, tempfile, threading, time
from pathlib import Path
from typing import Optional

os.environ.setdefault("OPIK_TRACK_DISABLE", "true")
import httpx, psutil  # noqa: E402

PATTERNS = ("sequential", "parallel", "supervisor")
Q = {"sequential": "What is a circuit breaker?", "parallel": "What is the best way to handle retries?",
     "supervisor": "Explain how to implement circuit breaker pattern in microservices with code examples"}
SERVE = [sys.executable, "-c", "import sys; from gaia_mas.rag.cli import rag_main; sys.exit(rag_main(sys.argv[1:]))", "serve"]

def pct(xs, p):
    xs = sorted(xs); return xs[min(len(xs) - 1, max(0, round(p / 100 * (len(xs) - 1))))]

def table(title, head, rows):
    print(f"\n### {title}\n\n| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for r in rows: print("| " + " | ".join(str(c) for c in r) + " |")

# --- 1 and 2: in process -----------------------------------------------------------------------------------

class CallCounter:
    "Counts the scripted model's calls (patched on the class, for this benchmark process only)."
    def __init__(self):
        from gaia_mas.core.scripted import ScriptedChatModel
        self.n, orig = 0, ScriptedChatModel._agenerate
        async def counted(model, *a, **kw):
            self.n += 1; return await orig(model, *a, **kw)
        ScriptedChatModel._agenerate = counted

async def overlap(latency:float, n:int, counter:CallCounter):
    from gaia_mas.rag.workflows.system import scripted_system
    from gaia_mas.rag.workflows.patterns import CRITICAL_PATH_CALLS
    system = scripted_system(latency=latency)
    rows = []
    for p in (*PATTERNS, "auto"):
        await system.aask(Q["supervisor" if p == "auto" else p], "warm", p)
        walls, calls, chosen = [], [], None
        for i in range(n):
            c0, t0 = counter.n, time.perf_counter()
            r = await system.aask(Q["supervisor" if p == "auto" else p], f"ov-{p}-{i}", p)
            walls.append(time.perf_counter() - t0); calls.append(counter.n - c0); chosen = r["pattern"]
        crit = CRITICAL_PATH_CALLS[chosen] + (CRITICAL_PATH_CALLS["auto"] if p == "auto" else 0)
        ideal, wall = crit * latency, statistics.median(walls)
        rows.append([p if p != "auto" else f"auto ({chosen})", statistics.median(calls), crit, f"{ideal:.2f}", f"{wall:.3f}",
                     f"{wall / ideal:.2f}x", "yes" if wall <= 1.2 * ideal else "NO"])
    return rows

async def overhead(n:int, tmp:str):
    "Per pattern: sessions in memory, then in SQLite (as the server keeps them)."
    from gaia_mas.rag.workflows.system import open_sessions, scripted_system
    rows = []
    for where, url in (("in process, sessions in memory", None), ("in process, sessions in SQLite", f"sqlite:///{tmp}/oh.sqlite")):
        async with open_sessions(url) as saver:
            system = scripted_system(saver, latency=0.0)
            for p in PATTERNS:
                await system.aask(Q[p], "warm", p)
                ts = []
                for i in range(n):
                    t0 = time.perf_counter(); await system.aask(Q[p], f"oh-{p}-{i}", p); ts.append(time.perf_counter() - t0)
                rows.append([p, where, f"{statistics.median(ts) * 1000:.0f}", f"{pct(ts, 95) * 1000:.0f}"])
    return rows

# --- 3 and 4: a real server ------------------------------------------------------------------------------

def free_port():
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); return s.getsockname()[1]

@contextlib.contextmanager
def running(cmd:list, port:int, env:dict, cwd:Optional[Path]=None, timeout:float=180, what:str="the server"):
    "Start the server `cmd` (listening on `port`), wait for its /health; (url, psutil.Process); stop its process group."
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    url, end = f"http://127.0.0.1:{port}", time.monotonic() + timeout
    try:
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/health", timeout=5).status_code == 200: break
            if proc.poll() is not None or time.monotonic() > end: raise RuntimeError(f"{what} did not start")
            time.sleep(0.3)
        yield url, psutil.Process(proc.pid)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try: proc.wait(timeout=60)
            except subprocess.TimeoutExpired: os.killpg(proc.pid, signal.SIGKILL); proc.wait(timeout=10)

def server(latency:float, kb:str, sessions:str, workers:int=1, code:Optional[Path]=None, timeout:float=180):
    "`gaia-mas serve --provider scripted --latency L` on a free port, from checkout `code` if given; (url, psutil.Process)."
    port = free_port()
    env = {**os.environ, "OPIK_TRACK_DISABLE": "true"}
    if code: env.update(PYTHONPATH=str(code), GAIA_MAS_PROMPTS=str(code/"prompts"))
    cmd = [*SERVE, "--provider", "scripted", "--latency", str(latency), "--port", str(port), "--kb", kb,
           "--sessions", sessions, "--workers", str(workers)]
    return running(cmd, port, env, code, timeout, f"the server ({code or 'here'})")

ENDPOINTS = [f"/multiagent/{p}/chat" for p in PATTERNS] + ["/multiagent/chat"]

async def load(url:str, sessions:int, per_session:int):
    "`sessions` concurrent sessions, each asking `per_session` questions in turn; (latencies, elapsed, failures)."
    lat, failures = [], 0
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=httpx.Limits(max_connections=sessions + 4)) as c:
        async def one(s):
            nonlocal failures
            for i in range(per_session):
                path = ENDPOINTS[(s + i) % len(ENDPOINTS)]
                q = Q[path.split("/")[2]] if path.count("/") == 3 else Q["sequential"]
                t0 = time.perf_counter()
                r = await c.post(path, json={"question": q, "session_id": f"load-{sessions}-{s}"})
                lat.append(time.perf_counter() - t0); failures += r.status_code != 200
        t0 = time.perf_counter()
        await asyncio.gather(*(one(s) for s in range(sessions)))
        return lat, time.perf_counter() - t0, failures

def rss(proc:psutil.Process) -> int:
    "Resident memory of the server and its children, in bytes."
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(psutil.Error): total += p.memory_info().rss
    return total

class Sampler:
    "Samples a process's RSS every 20 ms in a thread; `.peak`."
    def __init__(self, proc): self.proc, self.peak, self.stop = proc, rss(proc), threading.Event()
    def run(self):
        while not self.stop.wait(0.02): self.peak = max(self.peak, rss(self.proc))
    def __enter__(self): self.t = threading.Thread(target=self.run, daemon=True); self.t.start(); return self
    def __exit__(self, *a): self.stop.set(); self.t.join(5)

def http_overhead(url:str, n:int):
    rows = []
    with httpx.Client(base_url=url, timeout=60) as c:
        for p in PATTERNS:
            c.post(f"/multiagent/{p}/chat", json={"question": Q[p], "session_id": "warm"})
            ts = []
            for i in range(n):
                t0 = time.perf_counter(); c.post(f"/multiagent/{p}/chat", json={"question": Q[p], "session_id": f"h-{p}-{i}"})
                ts.append(time.perf_counter() - t0)
            rows.append([p, "HTTP: uvicorn process, sessions in SQLite", f"{statistics.median(ts) * 1000:.0f}", f"{pct(ts, 95) * 1000:.0f}"])
    return rows

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.2, help="seconds per scripted LLM call (default 0.2)")
    ap.add_argument("--quick", action="store_true", help="fewer requests")
    a = ap.parse_args(argv)
    from gaia_mas.rag.kb.ingest import sample_kb
    kb, n = sample_kb().url, (3 if a.quick else 5)
    print(f"RAG service benchmark: scripted models, {a.latency}s per LLM call, sample collection, {os.cpu_count()} CPUs")
    counter = CallCounter()
    table(f"1. Overlap: wall time against the ideal (critical-path calls x {a.latency}s), median of {n}",
          ["pattern", "LLM calls", "critical path", "ideal s", "wall s", "wall/ideal", "within 1.2x"], asyncio.run(overlap(a.latency, n, counter)))
    with tempfile.TemporaryDirectory() as tmp:
        rows = asyncio.run(overhead(4 * n, tmp))
        with server(0.0, kb, f"sqlite:///{tmp}/sessions-0.sqlite") as (url, _): rows += http_overhead(url, 4 * n)
        table("2. Framework overhead per request at zero latency (ms)", ["pattern", "where", "median", "p95"], rows)
        rows, mem = [], None
        with server(a.latency, kb, f"sqlite:///{tmp}/sessions-1.sqlite") as (url, proc):
            asyncio.run(load(url, 4, 1))  # warm-up: models, knowledge base, sessions table
            for sessions, per in ((1, 2 * n), (8, n), (32, 3 if a.quick else 4)):
                base = rss(proc)
                with Sampler(proc) as s: lat, elapsed, failures = asyncio.run(load(url, sessions, per))
                rows.append([sessions, len(lat), failures, f"{len(lat) / elapsed:.1f}", f"{statistics.median(lat):.2f}", f"{pct(lat, 95):.2f}"])
                if sessions == 32: mem = (base, s.peak)
        table(f"3. Server load: real uvicorn process, httpx client, {a.latency}s per LLM call, the four chat endpoints in turn",
              ["concurrent sessions", "requests", "failed", "requests/s", "p50 s", "p95 s"], rows)
    base, peak = mem
    per = (peak - base) / 32
    table("4. Memory under the 32-session load (server RSS)", ["baseline MB", "peak MB", "increment per concurrent request MB", "limit MB", "within"],
          [[f"{base / 2**20:.0f}", f"{peak / 2**20:.0f}", f"{per / 2**20:.2f}", 500, "yes" if peak < 500 * 2**20 else "NO"]])

if __name__ == "__main__": main()
