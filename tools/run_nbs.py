"""Execute notebooks in place so their outputs show on the docs site and in JupyterLab.

    python tools/run_nbs.py               # every notebook in nbs/
    python tools/run_nbs.py nbs/gaia/agents/22_graph.ipynb

Runs with the same offline settings as the tests, then cleans the notebooks with nbdev_clean.
"""
import os, subprocess, sys
from pathlib import Path
from execnb.shell import CaptureShell

ROOT = Path(__file__).resolve().parent.parent

def run(nb:Path):
    "Execute one notebook in its own folder and save it with outputs."
    os.chdir(nb.parent)
    CaptureShell().execute(nb, nb, exc_stop=True)

def run_each(nbs:list[Path]):
    "Run each notebook in a fresh process, as nbdev_test does, so no notebook sees another's settings."
    for nb in nbs:
        subprocess.run([sys.executable, __file__, "--one", str(nb)], check=True)
        print("ran", nb.relative_to(ROOT))

if __name__ == "__main__":
    os.environ.setdefault("OPIK_TRACK_DISABLE", "true")
    if sys.argv[1:2] == ["--one"]: run(Path(sys.argv[2])); sys.exit()
    run_each([Path(p).resolve() for p in sys.argv[1:]] or sorted(p for p in (ROOT/"nbs").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts))
    subprocess.run(["nbdev_clean"], cwd=ROOT, check=True)
