"""Why a burst's median grows with the CPU a request costs: a model of one `serve` worker, next to what it predicts.

    python bench/rag_burst_model.py

A request of the sequential workflow is four stretches of CPU work (start, search, analysis, answer) with a scripted LLM
call of `--latency` seconds between each two. A burst hands one worker `--size` of them at once. The model runs them on
one core in steps of 0.5 ms, under two schedules:
- processor sharing: every ready request gets an equal share of the core, which is what one event loop does when each
  request's work is many short steps queued behind every other request's;
- oldest first: the ready request that arrived first runs, which would keep a burst's early requests as fast as one alone.
It prints the median and p95 latency against one request alone, for a few costs per request. No timing is measured.
"""
import argparse, statistics


def simulate(n:int, cpu:tuple, latency:float, oldest:bool, dt:float=0.0005) -> tuple[float, float]:
    "(median, p95) latency of `n` requests that arrive together, each `cpu` stretches apart by `latency`."
    left, wake, stage, done, t = [cpu[0]] * n, [0.0] * n, [0] * n, [None] * n, 0.0
    while None in done:
        ready = [i for i in range(n) if done[i] is None and wake[i] <= t]
        for i in ([min(ready)] if oldest and ready else ready):
            left[i] -= dt if oldest else dt / len(ready)
            if left[i] > 1e-12: continue
            stage[i] += 1
            if stage[i] == len(cpu): done[i] = t + dt
            else: left[i], wake[i] = cpu[stage[i]], t + dt + latency
        t += dt
    lat = sorted(done)
    return statistics.median(lat), lat[int(0.95 * n)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=64, help="requests one worker gets (a burst of 128 on two workers: 64)")
    ap.add_argument("--latency", type=float, default=0.2)
    a = ap.parse_args(argv)
    print(f"one worker, {a.size} requests at once, {a.latency}s per LLM call; p50 (p95) against one request alone\n")
    print("| CPU per request | processor sharing | oldest first |\n|---|---|---|")
    for ms in (14, 12, 10, 8, 6, 4):
        cpu = tuple(ms / 1000 * f for f in (0.35, 0.35, 0.15, 0.15))
        one = simulate(1, cpu, a.latency, False)[0]
        ps, old = simulate(a.size, cpu, a.latency, False), simulate(a.size, cpu, a.latency, True)
        print(f"| {ms} ms | {ps[0] / one:.2f}x ({ps[1] / one:.2f}x) | {old[0] / one:.2f}x ({old[1] / one:.2f}x) |")


if __name__ == "__main__":
    main()
