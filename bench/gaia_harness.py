"""Benchmark of `gaia-mas run`'s engine with the scripted model: no key, no network, a fixed latency per LLM call.

One command, three tables:
1. As users meet it: 100 questions at 0.5 s per LLM call (a realistic hosted-model latency), concurrency 16.
   Wall time against the ideal, for what `gaia-mas run` does (`run_batch`: a thread pool, a deadline per question,
   SQLite checkpoints, a synced results file) and, for comparison, bare `app.invoke` on a thread pool and bare
   `app.ainvoke` under asyncio (neither with checkpoints nor results file). Target: `gaia-mas run` within 1.15x.
2. Stress: the same at 40 ms per call, where the framework's own CPU time starts to show.
3. The framework's own overhead per question at zero latency, sequential: bare LangGraph next to the run path
   (`run_task` + result line + checkpoint clean-up) in each LangGraph durability mode. Wall time and CPU time
   (all threads of this process; it is what the run path costs, whatever else the machine is doing).

Ideal wall time: every call of a question is on its critical path (the graph calls its agents one after another), and
a pool of `c` workers answers equal questions in ceil(n / c) waves, so ideal = ceil(n / c) x calls per question x latency.

Run: python bench/gaia_harness.py [--n 100] [--latency 0.5] [--stress-latency 0.04]   (about 3 minutes on 2 cores)
"""
from __future__ import annotations
import argparse, asyncio, math, os, resource, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from langgraph.checkpoint.memory import InMemorySaver
from gaia_mas.gaia.agents.config import load_baseline_prompts, make_agent_configs
from gaia_mas.gaia.agents.graph import create_multi_agent_graph
from gaia_mas.gaia.agents.build import scripted_llm
from gaia_mas.gaia.runs.checkpoints import forget, open_checkpointer, run_key
from gaia_mas.gaia.runs.runner import run_batch, run_task
from gaia_mas.gaia.runs.tasks import ResultWriter

CONFIGS = make_agent_configs(load_baseline_prompts())
TIMEOUT = 1800   # `gaia-mas run`'s default --timeout: every question runs under a deadline, as in real runs


def make_app(latency: float, checkpointer=None):
    "A graph on a fresh scripted model, and the model (to count its calls)."
    model = scripted_llm("42", latency)
    app, _ = create_multi_agent_graph(CONFIGS, research_tools=[], llms=model, checkpointer=checkpointer)
    return app, model


def tasks(n: int, tag: str) -> list[dict]:
    "n distinct tasks."
    return [{"task_id": f"{tag}-{i}", "question": f"Question {i}?", "level": 1} for i in range(n)]


def time_run_batch(n: int, latency: float, concurrency: int, folder: Path, durability: str = "async") -> tuple[float, int]:
    "Wall time and LLM calls of `run_batch` (threads, deadlines, SQLite checkpoints, synced results file)."
    out = folder/f"threads-{concurrency}-{latency}-{durability}.jsonl"
    with open_checkpointer(folder/f"cache-{concurrency}-{latency}-{durability}") as saver:
        app, model = make_app(latency, saver)
        t0 = time.perf_counter()
        run_batch(app, tasks(n, "t"), ResultWriter(out), concurrency=concurrency, timeout=TIMEOUT, key=run_key(out), durability=durability)
        return time.perf_counter() - t0, len(model.calls)


def time_bare_threads(n: int, latency: float, concurrency: int) -> tuple[float, int]:
    "Wall time and LLM calls of a thread pool over plain `app.invoke` (no checkpointer, no results file)."
    app, model = make_app(latency)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool: list(pool.map(lambda t: app.invoke({"question": t["question"]}), tasks(n, "b")))
    return time.perf_counter() - t0, len(model.calls)


def time_asyncio(n: int, latency: float, concurrency: int) -> tuple[float, int]:
    "Wall time and LLM calls of asyncio.gather over `app.ainvoke`, at most `concurrency` at once."
    app, model = make_app(latency)
    async def main():
        sem = asyncio.Semaphore(concurrency)
        async def one(t):
            async with sem: return await app.ainvoke({"question": t["question"]})
        await asyncio.gather(*(one(t) for t in tasks(n, "a")))
    t0 = time.perf_counter()
    asyncio.run(main())
    return time.perf_counter() - t0, len(model.calls)


MODES = {"gaia-mas run (threads)": time_run_batch, "bare threads, invoke": lambda n, l, c, _: time_bare_threads(n, l, c),
         "bare asyncio, ainvoke": lambda n, l, c, _: time_asyncio(n, l, c)}


def scaling_rows(n: int, latency: float, levels: tuple, folder: Path) -> list[tuple]:
    "(mode, concurrency, calls per question, wall, ideal, ratio) for each mode and concurrency."
    rows = []
    for mode, fn in MODES.items():
        for c in levels:
            wall, calls = fn(n, latency, c, folder)
            ideal = math.ceil(n / c) * (calls / n) * latency
            rows.append((mode, c, calls / n, wall, ideal, wall / ideal))
    return rows


def measure(run, tag: str, n: int) -> tuple[float, float]:
    "Wall and CPU milliseconds per question of `run(tag, n)`."
    t0, c0 = time.perf_counter(), time.process_time()
    run(tag, n)
    return (time.perf_counter() - t0) / n * 1000, (time.process_time() - c0) / n * 1000


def bare(app):
    "Plain `app.invoke` of each task, with a thread id if the graph has a checkpointer."
    def run(tag, n):
        for t in tasks(n, tag): app.invoke({"question": t["question"]}, {"configurable": {"thread_id": t["task_id"]}})
    return run


def run_path(app, folder: Path, durability: str):
    "What `gaia-mas run` does per question, on one thread: `run_task` under a deadline, the result line, the clean-up."
    out = folder/f"overhead-{durability}.jsonl"
    writer, key = ResultWriter(out), run_key(out)
    def run(tag, n):
        for t in tasks(n, f"{durability}-{tag}"):
            record, finished = run_task(app, t, key, TIMEOUT, durability=durability)
            if writer.write(record) and finished: forget(app, record["thread_id"])
    return run


def overhead_rows(n: int, folder: Path, rounds: int = 3) -> list[tuple[str, float, float]]:
    "(what, wall ms, CPU ms) per question at zero latency, sequential: the best of `rounds` interleaved rounds."
    with open_checkpointer(folder/"overhead-cache") as saver:
        runs = {"bare LangGraph: app.invoke, no checkpointer": bare(make_app(0.0)[0]),
                "bare LangGraph, in-memory checkpoints": bare(make_app(0.0, InMemorySaver())[0])}
        app, _ = make_app(0.0, saver)
        for durability, note in (("sync", "each step saved before the next"), ("async", "the default: saved while the next runs"),
                                 ("exit", "saved at the end only: no mid-question resume")):
            runs[f"gaia-mas run path, durability={durability} ({note})"] = run_path(app, folder, durability)
        for run in runs.values(): run("warm", 3)
        best = {what: (math.inf, math.inf) for what in runs}
        for r in range(rounds):   # interleaved, so that a burst of load elsewhere does not fall on one row only
            for what, run in runs.items():
                wall, cpu = measure(run, f"r{r}", n)
                best[what] = (min(best[what][0], wall), min(best[what][1], cpu))
    return [(what, *m) for what, m in best.items()]


def print_scaling(title: str, rows: list[tuple]) -> None:
    print(title)
    print(f"  {'mode':<24}{'concurrency':>12}{'calls/q':>9}{'wall s':>9}{'ideal s':>9}{'wall/ideal':>12}")
    for mode, c, cpq, wall, ideal, ratio in rows:
        print(f"  {mode:<24}{c:>12}{cpq:>9.0f}{wall:>9.2f}{ideal:>9.2f}{ratio:>12.2f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=100, help="questions per measurement")
    p.add_argument("--latency", type=float, default=0.5, help="seconds per scripted LLM call, as users meet it")
    p.add_argument("--concurrency", type=int, default=16, help="questions at a time at that latency")
    p.add_argument("--stress-latency", type=float, default=0.04, help="seconds per call for the stress table; 0 to skip it")
    a = p.parse_args()
    print(f"gaia_mas benchmark: {a.n} scripted questions, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, "
          f"load average {os.getloadavg()[0]:.1f} at the start\n")
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        time_run_batch(5, 0.0, 1, folder)  # warm-up: first-call costs out of the measurements
        real = scaling_rows(a.n, a.latency, (a.concurrency,), folder)
        stress = scaling_rows(a.n, a.stress_latency, (4, 16), folder) if a.stress_latency else []
        over = overhead_rows(max(1, a.n // 2), folder)
    ours = real[0][-1]
    print_scaling(f"1. As users meet it: {a.latency * 1000:.0f} ms per LLM call "
                  f"(gaia-mas run at {ours:.2f}x the ideal: {'within' if ours <= 1.15 else 'OVER'} the 1.15x target)", real)
    if stress: print_scaling(f"\n2. Stress: {a.stress_latency * 1000:.0f} ms per LLM call", stress)
    print(f"\n3. Framework overhead per question at zero latency, sequential (best of 3 interleaved rounds of {a.n // 2}):")
    base_cpu = over[0][2]
    print(f"  {'':<78}{'wall ms':>9}{'CPU ms':>9}{'CPU added':>11}")
    for what, wall, cpu in over:
        print(f"  {what:<78}{wall:>9.1f}{cpu:>9.1f}{cpu - base_cpu:>+11.1f}")
    print(f"\nPeak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
