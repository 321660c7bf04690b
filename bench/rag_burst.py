"""Bursts against `gaia-mas serve` on its defaults: a fresh HOME, ten pages ingested with the built-in embedder, and
`serve --provider scripted --latency 0.2` with no other flag (`--workers N` adds that flag).

    python bench/rag_burst.py                        # this checkout
    python bench/rag_burst.py --ref /tmp/main        # an older checkout too, loaded in turn with this one, in one run

For each version: one client (8 requests in a row), 32 concurrent sessions (each asking 4 questions in turn) and
`--bursts` bursts of `--size` simultaneous requests (each its own session), all on the sequential pattern, every
question different, down to the search query the scripted research agent writes (so every search embeds its query:
no cache sees the same text twice). Per load: p50, its ratio to the one client's p50, p95,
failures, the server's CPU milliseconds per request (its processes' user + system time, from /proc: robust to a
shared machine, unlike the wall times) and the busiest process's share of that CPU (50% when two workers split a load
evenly). The goals: 32 sessions within 1.3x and 128 simultaneous requests within 1.5x of
one client, with no failure.

The client runs on the server's cores, so its own CPU (the last column) slows the server down: httpx, the default,
spends about 2.7 ms per request; `--client raw` (asyncio's streams, a new connection per request) about a tenth of that.
"""
import argparse, asyncio, contextlib, hashlib, json as jsonlib, os, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path
from types import SimpleNamespace

os.environ.setdefault("OPIK_TRACK_DISABLE", "true")
import httpx, psutil  # noqa: E402

HERE = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(HERE/"bench")]
from rag_service import free_port, pct, running, table  # noqa: E402

GAIA = [sys.executable, "-c", "import sys; from gaia_mas.cli import main; sys.exit(main())"]
PAGES = 10  # the sample collection's first Markdown pages
PATH, Q = "/multiagent/sequential/chat", "What is a circuit breaker?"
GOALS = {"32 sessions": 1.3, "128 burst": 1.5}


def fresh_home(code:Path, tmp:Path, label:str) -> dict:
    "The environment of a user with a fresh HOME whose default knowledge base holds `PAGES` pages, ingested by `code`."
    home, pages = tmp/f"home-{label}", tmp/f"pages-{label}"
    pages.mkdir(parents=True); home.mkdir()
    for f in sorted((HERE/"nbs"/"samples"/"kb"/"docs").glob("*.md"))[:PAGES]: shutil.copy(f, pages)
    drop = ("GAIA_MAS_CACHE", "XDG_CACHE_HOME", "GAIA_MAS_KB", "GAIA_MAS_EMBEDDINGS", "GAIA_MAS_EMBEDDINGS_BASE_URL")
    env = {k: v for k, v in os.environ.items() if k not in drop} | {"HOME": str(home), "OPIK_TRACK_DISABLE": "true",
                                                                     "PYTHONPATH": str(code), "GAIA_MAS_PROMPTS": str(code/"prompts")}
    subprocess.run([*GAIA, "rag", "ingest", str(pages)], env=env, cwd=code, check=True, capture_output=True)
    return env


def serve(code:Path, env:dict, latency:float, workers:int|None, timeout:float=180):
    "`gaia-mas serve --provider scripted --latency L` from `code` on a free port, on the defaults; (url, psutil.Process)."
    port = free_port()
    extra = ["--workers", str(workers)] if workers else []
    cmd = [*GAIA, "serve", "--provider", "scripted", "--latency", str(latency), "--port", str(port), *extra]
    return running(cmd, port, env, code, timeout, f"serve ({code})")


def question(session:str, turn:int) -> str:
    "`Q` with a word of its own, which the scripted research agent keeps in the search query: each search embeds anew."
    word = hashlib.sha1(f"{session}/{turn}".encode()).hexdigest()[:10].translate(str.maketrans("0123456789", "ghijklmnop"))
    return f"{Q} (request {word})"


async def _ask(c:httpx.AsyncClient, session:str, turn:int=0) -> tuple[float, bool]:
    t0 = time.perf_counter()
    r = await c.post(PATH, json={"question": question(session, turn), "session_id": session})
    return time.perf_counter() - t0, r.status_code == 200


class RawClient:
    "A client that costs almost no CPU: each POST on a new connection, written and read with asyncio's streams."
    def __init__(self, base_url:str, **_): self.host, port = base_url.split("//")[1].rsplit(":", 1); self.port = int(port)
    async def __aenter__(self): return self
    async def __aexit__(self, *exc): return None

    async def post(self, path:str, json:dict):
        body = jsonlib.dumps(json).encode()
        head = (f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n")
        r, w = await asyncio.open_connection(self.host, self.port)
        try: w.write(head.encode() + body); data = await asyncio.wait_for(r.read(), 180)
        finally: w.close()
        return SimpleNamespace(status_code=int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0)


CLIENT = httpx.AsyncClient  # --client raw: RawClient


async def one_client(url:str, n:int, tag:str) -> list:
    async with CLIENT(base_url=url, timeout=180) as c:
        return [await _ask(c, f"{tag}-{i}") for i in range(n)]


async def sessions(url:str, n:int, turns:int, tag:str) -> list:
    "`n` concurrent sessions, each asking `turns` questions in turn."
    async with CLIENT(base_url=url, timeout=180, limits=httpx.Limits(max_connections=n + 8)) as c:
        async def one(s): return [await _ask(c, f"{tag}-{s}", t) for t in range(turns)]
        return [r for rs in await asyncio.gather(*(one(s) for s in range(n))) for r in rs]


async def burst(url:str, n:int, tag:str) -> list:
    "`n` simultaneous requests, each its own session."
    async with CLIENT(base_url=url, timeout=180, limits=httpx.Limits(max_connections=n + 8)) as c:
        return await asyncio.gather(*(_ask(c, f"{tag}-{i}") for i in range(n)))


def by_process(proc:psutil.Process) -> dict:
    "CPU seconds (user + system) of each process of the server: the workers, or the one process."
    out = {}
    for p in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(psutil.Error): t = p.cpu_times(); out[p.pid] = t.user + t.system
    return out


def measure(proc:psutil.Process, fn) -> tuple[list, int, float, float, float]:
    "(latencies, failures, server CPU ms per request, the busiest process's share of it, client CPU ms per request)."
    w0, me = by_process(proc), time.process_time(); rs = fn()
    mine, w1 = time.process_time() - me, by_process(proc)
    spent = [w1[p] - w0.get(p, 0.0) for p in w1]
    server = max(sum(spent), 1e-9)
    return [t for t, _ in rs], sum(not ok for _, ok in rs), 1000 * server / len(rs), max(spent) / server, 1000 * mine / len(rs)


def run(versions:list, latency:float, workers:int|None, size:int, bursts:int) -> None:
    with tempfile.TemporaryDirectory() as t, contextlib.ExitStack() as stack:
        servers = {label: stack.enter_context(serve(code, fresh_home(code, Path(t), label), latency, workers))
                   for label, code in versions}
        loads = [("one client", lambda u, g: asyncio.run(one_client(u, 8, g))),
                 ("32 sessions", lambda u, g: asyncio.run(sessions(u, 32, 4, g))),
                 *((f"{size} burst", lambda u, g: asyncio.run(burst(u, size, g))) for _ in range(bursts))]
        for label, (url, _) in servers.items(): asyncio.run(burst(url, 16, f"warm-{label}"))
        rows, one = [], {}
        for i, (load, fn) in enumerate(loads):
            for label, (url, proc) in servers.items():
                lat, fails, ms, share, client = measure(proc, lambda: fn(url, f"{label}-{i}"))
                p50 = statistics.median(lat); one.setdefault(label, p50)
                goal = GOALS.get(load)
                ratio = f"{p50 / one[label]:.2f}x" + (f" ({'within' if p50 / one[label] <= goal else 'above'} {goal}x)" if goal else "")
                rows.append([load, label, len(lat), f"{p50:.2f}", ratio, f"{pct(lat, 95):.2f}", fails, f"{ms:.1f}",
                             f"{100 * share:.0f}%", f"{client:.1f}"])
        table(f"`serve` on its defaults{f' with --workers {workers}' if workers else ''}, {latency}s per LLM call, "
              f"{'httpx' if CLIENT is httpx.AsyncClient else 'raw'} client, "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end (wall times are noisy on a shared "
              "machine; the CPU per request is not)",
              ["load", "code", "requests", "p50 s", "p50 / one client", "p95 s", "failed", "server CPU ms/request",
               "busiest process's share", "client CPU ms/request"], rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ref", type=Path, help="an older checkout, measured in the same run (before)")
    ap.add_argument("--workers", type=int, help="pass --workers N to serve (default: no flag, serve's default)")
    ap.add_argument("--size", type=int, default=128); ap.add_argument("--bursts", type=int, default=3)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--client", choices=("httpx", "raw"), default="httpx",
                    help="httpx (about 2.7 ms of CPU per request, on the server's cores) or raw (asyncio streams, about 0.3)")
    a = ap.parse_args(argv)
    global CLIENT
    CLIENT = RawClient if a.client == "raw" else httpx.AsyncClient
    versions = [*((("before", a.ref.resolve()),) if a.ref else ()), ("after" if a.ref else "this", HERE)]
    run(versions, a.latency, a.workers, a.size, a.bursts)


if __name__ == "__main__":
    main()
