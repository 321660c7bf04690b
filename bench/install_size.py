"""What `pip install gaia_mas` costs a user: distributions, megabytes and seconds, for the core and for each extra.

    python bench/install_size.py                          # this checkout: the core and [all]
    python bench/install_size.py --ref 76d643a            # and a commit of this repository, side by side
    python bench/install_size.py --ref 76d643a --refs-only --extras ""   # that commit's plain install alone
    python bench/install_size.py --extras "" serve files  # other installs ("" is the core)

Each version is built into a wheel (`pip wheel --no-deps`; a `--ref` is checked out with `git archive` first). Each
install is a fresh venv of `--python` (Debian's /usr/bin/python3 where there is one), then `pip install WHEEL[EXTRA]`
with the machine's own pip settings (index, cache, proxies), timed. Printed: a Markdown table of the distributions in
the venv (every one `pip list` shows, pip and gaia_mas included), the megabytes of its site-packages (`du -sm`) and
the install's wall seconds. The seconds depend on pip's cache and the network: the first install of a version
downloads what later ones reuse, so run it twice when the time matters.
"""
import argparse, json, subprocess, sys, tempfile, time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

def build_wheel(src:Path, # a source tree holding setup.py and settings.ini
                out:Path, # the folder the wheel is written to
               ) -> Path:
    "The wheel of the source tree `src`, without its dependencies."
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", out, src],
                       capture_output=True, text=True, timeout=600)
    if r.returncode: raise RuntimeError(f"pip wheel {src} failed:\n{r.stderr[-3000:]}")
    return next(out.glob("gaia_mas-*.whl"))

def checkout(ref:str, # a commit, branch or tag of this repository
             dest:Path, # an empty folder
            ) -> Path:
    "The tree of `ref`, unpacked into `dest` with `git archive`."
    tar = subprocess.run(["git", "-C", HERE, "archive", ref], check=True, capture_output=True, timeout=300).stdout
    subprocess.run(["tar", "-x", "-C", dest], input=tar, check=True, timeout=300)
    return dest

def site_packages(venv:Path) -> Path:
    "The site-packages folder of `venv`."
    return next((venv/"lib").glob("python3*/site-packages"))

def measure(venv:Path) -> dict:
    "The distributions in `venv` (`pip list`) and the megabytes of its site-packages (`du -sm`)."
    dists = json.loads(subprocess.run([venv/"bin"/"python", "-m", "pip", "list", "--format=json"], check=True,
                                      capture_output=True, text=True, timeout=300).stdout)
    mb = subprocess.run(["du", "-sm", site_packages(venv)], check=True, capture_output=True, text=True).stdout
    return {"dists": len(dists), "mb": int(mb.split()[0]), "names": sorted(d["name"].lower() for d in dists)}

def install(wheel:Path, # the gaia_mas wheel
            extra:str, # an extra's name, or "" for the core
            venv:Path, # a folder that does not exist yet
            python:str="/usr/bin/python3", # the interpreter the venv is made from
            pip_args=(), # more arguments for `pip install` (e.g. --no-index --find-links DIR)
           ) -> dict:
    "A fresh venv with `wheel[extra]` installed: `measure`'s figures plus the install's wall seconds."
    subprocess.run([python, "-m", "venv", venv], check=True, timeout=300)
    spec = f"{wheel}[{extra}]" if extra else str(wheel)
    t = time.monotonic()
    r = subprocess.run([venv/"bin"/"python", "-m", "pip", "install", "-q", *pip_args, spec], capture_output=True,
                       text=True, timeout=3600)
    if r.returncode: raise RuntimeError(f"pip install {spec} failed:\n{r.stderr[-3000:]}")
    return {**measure(venv), "seconds": round(time.monotonic() - t)}

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", action="append", default=[], help="a commit of this repository to measure too")
    ap.add_argument("--refs-only", action="store_true", help="measure the --ref commits alone, not this checkout")
    ap.add_argument("--extras", nargs="+", default=["", "all"], help='the extras to install ("" is the core)')
    ap.add_argument("--python", default="/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable)
    ap.add_argument("--json", type=Path, help="also write the figures (and each install's distributions) here")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="install-size-") as tmp:
        tmp = Path(tmp)
        trees = {ref: checkout(ref, Path(tempfile.mkdtemp(dir=tmp))) for ref in a.ref}
        if not a.refs_only: trees["this checkout"] = HERE
        for name, src in trees.items():
            wheel = build_wheel(src, Path(tempfile.mkdtemp(dir=tmp)))
            for extra in a.extras:
                fig = install(wheel, extra, Path(tempfile.mkdtemp(dir=tmp))/"venv", a.python)
                rows.append({"version": name, "install": f"gaia_mas[{extra}]" if extra else "gaia_mas", **fig})
                print(f"{name}: {rows[-1]['install']}: {fig['dists']} distributions, {fig['mb']} MB, "
                      f"{fig['seconds']} s", file=sys.stderr)
    print(f"\n### pip install into a fresh venv of {a.python}\n\n| version | install | distributions | MB | seconds |\n"
          "|---|---|---|---|---|")
    for r in rows: print(f"| {r['version']} | `{r['install']}` | {r['dists']} | {r['mb']} | {r['seconds']} |")
    if a.json: a.json.write_text(json.dumps(rows, indent=1))

if __name__ == "__main__": main()
