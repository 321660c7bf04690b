"""Measure what the README says about installing and testing, on a fresh clone, and write it there.

    python tools/measure_readme.py             # clone HEAD, then time make install, make test, make test-fast
    python tools/measure_readme.py --from DIR/measure.json  # write the figures of an earlier run again

It clones the committed HEAD of this checkout into a new folder beside it (so that the tests find what a checkout finds
next to it), runs `make install`, `make test-nbs` and `make test-py` (the two halves of `make test`, timed apart; pytest
lists its 30 slowest tests) and `make test-fast`, each as a new contributor types it, and keeps their output in
`measure-<date>.log` in that folder. Then it writes one paragraph of nbs/index.ipynb, the one after the line
`<!-- measured by tools/measure_readme.py -->`, with the figures, the date and the machine (cores, memory, CPU model,
system, Python, and the load average while it ran: other jobs slow every figure), and rebuilds README.md.
"""
from __future__ import annotations
import argparse, datetime, json, os, platform, re, subprocess, sys, tempfile, textwrap, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARK = "<!-- measured by tools/measure_readme.py -->"
STEPS = [("install", "make install"), ("notebooks", "make test-nbs"),
         ("pytest", "make test-py"), ("fast", "make test-fast")]


def machine() -> str:
    "This machine in a few words: cores, memory, CPU model, system and Python."
    cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                if l.startswith("model name")), platform.machine()) if Path("/proc/cpuinfo").exists() else platform.machine()
    mem = next((int(l.split()[1]) // 2**20 for l in Path("/proc/meminfo").read_text().splitlines()
                if l.startswith("MemTotal")), 0) if Path("/proc/meminfo").exists() else 0
    osr = Path("/etc/os-release")
    system = next((l.split("=", 1)[1].strip('"') for l in osr.read_text().splitlines() if l.startswith("PRETTY_NAME")),
                  platform.system()) if osr.exists() else platform.platform()
    return f"{os.cpu_count()} cores ({cpu}), {mem} GB, {system}, Python {platform.python_version()}"


def run_step(name:str, cmd:str, cwd:Path, log) -> dict:
    "Run one command in the clone, its output into `log`; its seconds, exit code, and the load average around it."
    log.write(f"\n===== {name}: {cmd}\n"); log.flush()
    t0, load0 = time.monotonic(), os.getloadavg()[0]
    r = subprocess.run(["bash", "-c", cmd], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    secs, load1 = time.monotonic() - t0, os.getloadavg()[0]
    log.write(r.stdout); log.write(f"\n===== {name}: exit {r.returncode} in {secs:.0f} s\n"); log.flush()
    return {"seconds": round(secs), "exit": r.returncode, "load": round((load0 + load1) / 2, 1), "out": r.stdout}


def counts(out:str) -> str:
    "pytest's summary line ('512 passed, 6 skipped, 2 deselected') from a step's output."
    found = re.findall(r"^=*\s*((?:\d+ \w+(?:, )?)+) in [\d.]+s", out, re.M)
    return found[-1].strip() if found else "?"


def paragraph(r:dict, when:str, where:str) -> str:
    "The README's sentence of figures."
    s = {k: r[k]["seconds"] for k in r}
    load = max(r[k]["load"] for k in r)
    failed = [k for k in r if r[k]["exit"]]
    busy = "with other jobs running" if load > (os.cpu_count() or 1) else "otherwise idle"
    return (f"Measured by `python tools/measure_readme.py` on a fresh clone on {when}, on {where}, {busy} (load "
            f"average up to {load}): `make install` {s['install']} s; `make test` "
            f"{s['notebooks'] + s['pytest']} s, the notebooks {s['notebooks']} s and pytest {s['pytest']} s "
            f"({counts(r['pytest']['out'])}); `make test-fast` {s['fast']} s ({counts(r['fast']['out'])})."
            + (f" These steps failed: {', '.join(failed)}." if failed else ""))


def wrapped(text:str) -> str: return textwrap.fill(text, 120, break_on_hyphens=False)


def write_readme(text:str) -> None:
    "Put `text` after the MARK line of nbs/index.ipynb, then rebuild README.md."
    nb_path = ROOT/"nbs"/"index.ipynb"
    nb = json.loads(nb_path.read_text())
    for cell in nb["cells"]:
        src = "".join(cell["source"])
        if MARK in src:
            src = re.sub(rf"({re.escape(MARK)}\n)(.*?)(\n\n|\Z)", lambda m: m.group(1) + text + m.group(3), src,
                         count=1, flags=re.S)
            cell["source"] = src.splitlines(keepends=True)
            break
    else: raise SystemExit(f"no line {MARK} in {nb_path}")
    nb_path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    subprocess.run([sys.executable, str(ROOT/"tools"/"readme.py")], check=True)


def measure() -> tuple[dict, Path]:
    "Clone HEAD beside this checkout and run the steps; their results and the log."
    clone = Path(tempfile.mkdtemp(prefix="measure-", dir=ROOT.parent))/ROOT.name
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    env_note = {k: os.environ[k] for k in ("PIP_INDEX_URL", "PIP_FIND_LINKS") if k in os.environ}
    log_path = clone.parent/f"measure-{datetime.date.today()}.log"
    results = {}
    with open(log_path, "w") as log:
        log.write(f"clone of {ROOT} at {subprocess.run(['git', 'rev-parse', 'HEAD'], cwd=ROOT, capture_output=True, text=True).stdout}"
                  f"machine: {machine()}\npip settings: {env_note}\n")
        for name, cmd in STEPS:
            results[name] = run_step(name, cmd, clone, log)
            print(f"{name}: {results[name]['seconds']} s (exit {results[name]['exit']})", flush=True)
    (clone.parent/"measure.json").write_text(json.dumps({k: {**v, "out": v["out"][-20000:]} for k, v in results.items()}))
    return results, log_path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--from", dest="prev", type=Path, help="the measure.json of an earlier run: write its figures again")
    ap.add_argument("--when", default=None, help="the date of that run (default today)")
    a = ap.parse_args()
    if a.prev: results = json.loads(a.prev.read_text())
    else: results, log = measure(); print(f"log: {log}")
    text = paragraph(results, a.when or datetime.date.today().isoformat(), machine())
    write_readme(wrapped(text))
    print(text)


if __name__ == "__main__": main()
