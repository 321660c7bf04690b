"""The knowledge-base commands from a cold start: each run a new process, as a user types the command.

    python bench/rag_cli_start.py                     # this checkout
    python bench/rag_cli_start.py --ref ../old-main   # and an older checkout, side by side in the same loop

Each version gets a fresh HOME holding the sample collection, ingested by that version on the defaults (`gaia-mas rag
ingest nbs/samples/kb/docs`, the built-in embedder). Each command then runs `--runs` times in new processes of this interpreter, alternating between the
versions so that both see the same machine. Printed: median and best wall time per command, the ratio of medians, and
Python's own start as the floor.
"""
import argparse, os, statistics, subprocess, sys, tempfile, time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
MAIN = "import sys; from gaia_mas.cli import main; sys.exit(main(sys.argv[1:]))"
COMMANDS = {
    "python -c pass (the floor)": None,
    'rag search "circuit breaker" --mode keyword': ["rag", "search", "circuit breaker", "--mode", "keyword"],
    'rag search "how long should a call wait" (hybrid)': ["rag", "search", "how long should a call wait"],
    "rag stats": ["rag", "stats"],
}

def env_for(code:Path, home:Path) -> dict:
    "A new user's environment running the checkout `code`."
    return {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8", "PYTHONPATH": str(code),
            "OPIK_TRACK_DISABLE": "true"}

def once(code:Path, home:Path, argv) -> float:
    "Wall seconds of one run of `gaia-mas ARGV` from the checkout `code` (or of bare Python when `argv` is None)."
    # run in HOME: `python -c` puts the working folder first on the path, which would pick this checkout's package
    cmd = [sys.executable, "-c", "pass"] if argv is None else [sys.executable, "-c", MAIN, *argv]
    t = time.perf_counter()
    subprocess.run(cmd, env=env_for(code, home), cwd=home, check=True, capture_output=True, timeout=300)
    return time.perf_counter() - t

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", type=Path, help="an older checkout to measure beside this one")
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    versions = {"this checkout": HERE, **({f"--ref {a.ref}": a.ref.resolve()} if a.ref else {})}
    homes = {v: Path(tempfile.mkdtemp(prefix="cli-start-")) for v in versions}
    for v, code in versions.items():
        subprocess.run([sys.executable, "-c", MAIN, "rag", "ingest", str(HERE/"nbs/samples/kb/docs")],
                       env=env_for(code, homes[v]), cwd=homes[v], check=True, capture_output=True,
                       timeout=900)
    for v, code in versions.items():  # each version runs its own package
        where = subprocess.run([sys.executable, "-c", "import gaia_mas; print(gaia_mas.__file__)"], cwd=homes[v],
                               env=env_for(code, homes[v]), capture_output=True, text=True, check=True).stdout
        assert where.startswith(str(code)), (v, where)
    times = {(v, c): [] for v in versions for c in COMMANDS}
    for _ in range(a.runs):
        for c, argv in COMMANDS.items():
            for v, code in versions.items(): times[v, c].append(once(code, homes[v], argv))
    head = ["command"] + [f"{v}: median / best (s)" for v in versions] + (["ratio of medians"] if a.ref else [])
    print(f"\n### Cold starts, {a.runs} runs each, {sys.executable}\n\n| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for c in COMMANDS:
        med = {v: statistics.median(times[v, c]) for v in versions}
        cells = [f"{med[v]:.3f} / {min(times[v, c]):.3f}" for v in versions]
        if a.ref: cells.append(f"{med[f'--ref {a.ref}'] / med['this checkout']:.1f}x")
        print(f"| {c} | " + " | ".join(cells) + " |")

if __name__ == "__main__": main()
