"""Inside one `serve` worker during a burst: the CPU by thread, and whether serving the oldest request first helps.

    python bench/rag_burst_inproc.py                 # every variant, 64 simultaneous requests, 3 rounds each
    python bench/rag_burst_inproc.py --size 32 --variants shipped,oldest

One process, no HTTP: the sequential workflow on the defaults (ten sample pages ingested with the built-in embedder,
scripted models at 0.2 s per call, every question different), `--size` requests at once, `--rounds` times after a
warm-up. Each variant runs in a child process of its own, since it changes how the workflow runs:
- `shipped`: as a `serve` worker runs it (uvloop; the retrieval tool and the citations in threads, the query embedded
  in a thread that batches the queries asked meanwhile);
- `oldest`: the same on an event loop whose ready queue is a heap ordered by the arrival of the request each callback
  belongs to (a context variable set when the request starts), so the oldest ready request always runs first;
- `loop-alone` and `loop-alone-oldest`: the tool and the citations run on the event loop, each query embedded alone;
- `loop-batched` and `loop-batched-oldest`: the tool on the event loop, its query embedded first in a thread that
  batches the queries waiting, the oldest 8 at a time.
Prints per variant the p50 and p95, the latency of the first and last request by arrival, and the CPU milliseconds per
request by thread: the event loop's, the executor's and the session store's (from /proc/self/task). No assertion.
"""
import argparse, asyncio, contextlib, contextvars, heapq, io, itertools, json, os, shutil, statistics, subprocess
import sys, tempfile, threading, time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
VARIANTS = ("shipped", "oldest", "loop-alone", "loop-alone-oldest", "loop-batched", "loop-batched-oldest")
ARRIVAL = contextvars.ContextVar("arrival", default=0.0)


class _Ready:
    "asyncio's ready queue as a heap: callbacks of the request that arrived first come first (others, such as I/O, first of all)."
    def __init__(self): self.heap, self.seq = [], itertools.count()
    def append(self, h): heapq.heappush(self.heap, (h._context.get(ARRIVAL, 0.0) if h._context else 0.0, next(self.seq), h))
    def popleft(self): return heapq.heappop(self.heap)[2]
    def __len__(self): return len(self.heap)
    def __bool__(self): return bool(self.heap)
    def clear(self): self.heap.clear()


class OldestFirstLoop(asyncio.SelectorEventLoop):
    def __init__(self, *a, **kw): super().__init__(*a, **kw); self._ready = _Ready()


def thread_cpu() -> dict:
    "CPU milliseconds so far of this process's threads, by kind: loop, executor, sessions, other."
    out = dict.fromkeys(("loop", "executor", "sessions", "other"), 0.0)
    for t in threading.enumerate():
        with contextlib.suppress(OSError):
            f = Path(f"/proc/self/task/{t.native_id}/stat").read_text().rsplit(")", 1)[1].split()
            kind = ("loop" if t is threading.main_thread() else "executor" if t.name.startswith("burst")
                    else "sessions" if "connection_worker" in t.name else "other")
            out[kind] += (int(f[11]) + int(f[12])) * 1000 / os.sysconf("SC_CLK_TCK")
    return out


def on_the_loop(batched:bool) -> None:
    "Run the retrieval tool and the citations on the event loop; with `batched`, embed the tool's query first in a thread."
    import langchain_core.tools.structured as structured
    import gaia_mas.rag.kb.embeddings as emb, gaia_mas.rag.workflows.answering as answering
    ready, asked = {}, emb.LocalEmbeddings.embed_query
    emb.LocalEmbeddings.embed_query = lambda self, t: ready.pop(t) if t in ready else asked(self, t)
    async def direct(_config, func, *args, **kw):
        q = ((args[0].get("args") or {}).get("query") if args and isinstance(args[0], dict) else None)
        if batched and q and q not in ready: ready[q] = await asyncio.to_thread(emb._queries(os.getpid()), q)
        return func(*args, **kw)
    structured.run_in_executor = direct
    async def inline(f, *a, **kw): return f(*a, **kw)
    answering.asyncio = type("A", (), {k: getattr(asyncio, k) for k in dir(asyncio) if not k.startswith("__")})
    answering.asyncio.to_thread = inline


def oldest_batches(most:int=8) -> None:
    "Query batches of at most `most` texts, the oldest requests' first."
    import gaia_mas.rag.kb.embeddings as emb
    def take(self):
        with self.lock:
            self.waiting.sort(key=lambda a: getattr(a, "arrival", 0.0))
            batch, self.waiting = self.waiting[:most], self.waiting[most:]
        try: vecs, err = self.embed([a.text for a in batch]), None
        except BaseException as e: vecs, err = [None] * len(batch), e
        for a, v in zip(batch, vecs): a.vec, a.err, a.lead = v, err, False; a.woken.set()
        with self.lock:
            if self.waiting: nxt = min(self.waiting, key=lambda a: a.arrival); nxt.lead = True; nxt.woken.set()
            else: self.busy = False
    class Asked(emb._Asked):
        __slots__ = ("arrival",)
        def __init__(self, text): super().__init__(text); self.arrival = ARRIVAL.get()
    emb._Asked, emb.QueryBatcher._turn = Asked, take


async def rounds(size:int, n:int, tmp:Path) -> dict:
    from concurrent.futures import ThreadPoolExecutor
    from rag_burst import question
    from gaia_mas.rag.workflows.system import make_rag_system, open_sessions
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(32, "burst"))
    async with open_sessions(f"sqlite:///{tmp}/sessions.sqlite") as saver:
        rag = make_rag_system(provider="scripted", latency=0.2, checkpointer=saver)
        async def ask(tag, i):
            ARRIVAL.set(time.monotonic()); t = time.perf_counter()
            await rag.aask(question(tag, i), f"{tag}-{i}", "sequential")
            return time.perf_counter() - t
        await asyncio.gather(*(ask("warm", i) for i in range(16)))
        lat, first, last, c0 = [], [], [], thread_cpu()
        for r in range(n):
            got = await asyncio.gather(*(ask(f"r{r}", i) for i in range(size)))
            lat += got; first.append(got[0]); last.append(got[-1])
        c1 = thread_cpu()
    return {"p50": statistics.median(lat), "p95": sorted(lat)[int(0.95 * len(lat))], "first": statistics.median(first),
            "last": statistics.median(last), **{k: (c1[k] - c0[k]) / (size * n) for k in c0}}


def child(variant:str, size:int, n:int) -> dict:
    "One variant, measured in this process."
    tmp = Path(tempfile.mkdtemp()); pages = tmp/"pages"; pages.mkdir()
    for f in sorted((HERE/"nbs"/"samples"/"kb"/"docs").glob("*.md"))[:10]: shutil.copy(f, pages)
    os.environ.update(GAIA_MAS_CACHE=str(tmp/"cache"), GAIA_MAS_PROMPTS=str(HERE/"prompts"), OPIK_TRACK_DISABLE="true")
    sys.path[:0] = [str(HERE), str(HERE/"bench")]
    from gaia_mas.cli import main
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()): main(["rag", "ingest", str(pages)])
    if variant.startswith("loop-"): on_the_loop(batched=variant.startswith("loop-batched"))
    if variant.startswith("loop-batched"): oldest_batches()
    try:
        if not (variant == "oldest" or variant.endswith("-oldest")): import uvloop; return uvloop.run(rounds(size, n, tmp))
        with asyncio.Runner(loop_factory=OldestFirstLoop) as runner: return runner.run(rounds(size, n, tmp))
    finally: shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=64); ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--variants", default=",".join(VARIANTS)); ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child: print(json.dumps(child(a.child, a.size, a.rounds))); return
    print(f"one process, {a.size} simultaneous requests x {a.rounds} rounds, 0.2 s per LLM call, {os.cpu_count()} CPUs\n")
    print("| variant | p50 s | p95 s | first / last by arrival, s | CPU ms per request: loop + executor + sessions |")
    print("|---|---|---|---|---|")
    for v in a.variants.split(","):
        out = subprocess.run([sys.executable, __file__, "--child", v, "--size", str(a.size), "--rounds", str(a.rounds)],
                             capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
        r = json.loads(out)
        print(f"| {v} | {r['p50']:.2f} | {r['p95']:.2f} | {r['first']:.2f} / {r['last']:.2f} | "
              f"{r['loop']:.1f} + {r['executor']:.1f} + {r['sessions']:.1f} = {r['loop'] + r['executor'] + r['sessions']:.1f} |")
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
