"""A burst of simultaneous requests against one `gaia-mas serve` of this checkout, with the machine to itself.

    python bench/rag_burst.py [--workers 2] [--size 128] [--bursts 3] [--latency 0.2]

`bench/rag_load.py` runs the version before and the version after side by side, with a memory sampler polling both;
this bench runs one server only (scripted models, SQLite sessions, the sample knowledge base), as a deployment would.
It prints the p50 of one request alone (8 in a row), then for each burst of `--size` simultaneous requests (each its
own session, every question different, so no cache sees the same text twice): its p50 and the ratio to one request,
failures, and CPU milliseconds per request of the server's processes and of this client, which shares the machine's
cores with the server.
"""
import argparse, asyncio, os, statistics, sys, tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(HERE/"bench")]
os.environ.setdefault("OPIK_TRACK_DISABLE", "true")
import rag_load  # noqa: E402


def own_cpu() -> float:
    t = os.times(); return t.user + t.system


def run(workers:int, size:int, bursts:int, latency:float) -> None:
    from gaia_mas.rag.kb.ingest import sample_kb
    with tempfile.TemporaryDirectory() as t, rag_load.server(HERE, latency, f"sqlite:///{sample_kb()}",
                                                             f"sqlite:///{t}/s.sqlite", workers) as (url, proc):
        rag_load.DISTINCT = True
        asyncio.run(rag_load.burst(url, 8, "warm"))
        one = statistics.median(asyncio.run(rag_load.singles(url, 8, "single")))
        print(f"{workers} worker(s), {latency}s per LLM call, load average {os.getloadavg()[0]:.1f}: "
              f"one request alone, p50 {one:.2f}s")
        print("| burst | p50 s | ratio | p95 s | failed | server CPU ms/request | client CPU ms/request |")
        print("|---|---|---|---|---|---|---|")
        for i in range(bursts):
            s0, c0 = rag_load.cpu(proc), own_cpu()
            lat, fails = asyncio.run(rag_load.burst(url, size, f"burst{i}"))
            s1, c1, p50 = rag_load.cpu(proc), own_cpu(), statistics.median(lat)
            print(f"| {i + 1} of {size} | {p50:.2f} | {p50 / one:.2f}x | {rag_load.pct(lat, 95):.2f} | {fails} | "
                  f"{1000 * (s1 - s0) / size:.1f} | {1000 * (c1 - c0) / size:.1f} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=2); ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--bursts", type=int, default=3); ap.add_argument("--latency", type=float, default=0.2)
    a = ap.parse_args(argv)
    run(a.workers, a.size, a.bursts, a.latency)


if __name__ == "__main__":
    main()
