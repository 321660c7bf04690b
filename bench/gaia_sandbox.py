"""The cost of the sandbox: first and later `python_repl_tool` calls, under bubblewrap and in the process fallback.

    python bench/gaia_sandbox.py [--repeat 5] [--later 20]

The first call of a session starts the worker (bubblewrap + Python); later calls reuse it.
Each figure is the median over `--repeat` fresh sessions (first call) or over `--later` calls (later calls).
"""
import argparse, os, shutil, statistics, sys, time

def measure(mode:str, repeat:int, later:int, code:str) -> dict:
    "Median seconds of the first call and of the later calls of `python_repl_tool` with `GAIA_MAS_SANDBOX=mode`."
    from gaia_mas.gaia.tools.expert_tools import python_repl_tool, python_session
    os.environ["GAIA_MAS_SANDBOX"] = mode
    firsts, laters = [], []
    for _ in range(repeat):
        with python_session():
            t = time.perf_counter(); python_repl_tool.invoke(code); firsts.append(time.perf_counter() - t)
            for _ in range(later):
                t = time.perf_counter(); python_repl_tool.invoke(code); laters.append(time.perf_counter() - t)
    return {"first call": statistics.median(firsts), "later call": statistics.median(laters)}

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5, help="fresh sessions per mode")
    p.add_argument("--later", type=int, default=20, help="calls after the first, per session")
    p.add_argument("--code", default="print(sum(range(1000)))", help="the code each call runs")
    a = p.parse_args(argv)
    os.environ.setdefault("OPIK_TRACK_DISABLE", "true")
    from gaia_mas.gaia.tools.sandbox import _bwrap_problem
    problem = _bwrap_problem(shutil.which("bwrap") or "")
    if problem: sys.exit(f"bubblewrap cannot run here ({problem}); nothing to compare.")
    saved = os.environ.get("GAIA_MAS_SANDBOX")
    try: res = {m: measure(m, a.repeat, a.later, a.code) for m in ("bwrap", "process")}
    finally:
        if saved is None: os.environ.pop("GAIA_MAS_SANDBOX", None)
        else: os.environ["GAIA_MAS_SANDBOX"] = saved
    print(f"python_repl_tool, median of {a.repeat} sessions x {a.later} later calls, code: {a.code}")
    print(f"{'':12} {'bwrap':>10} {'process':>10} {'ratio':>7}")
    for row in ("first call", "later call"):
        b, q = res["bwrap"][row], res["process"][row]
        print(f"{row:12} {b * 1000:8.1f}ms {q * 1000:8.1f}ms {b / q:6.2f}x")

if __name__ == "__main__": main()
