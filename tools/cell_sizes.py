"""The size of the library's exported cells: the median, the largest, and any over the limit (`--check` fails on those).

Each `#| export` or `#| exporti` cell of nbs/ counts its lines of code (blank lines and the directive left out). The same
script gives the lines of each module in gaia_mas/, which must stay within `--max-module`.

    python tools/cell_sizes.py            # the figures
    python tools/cell_sizes.py --check    # exit 1 when a cell is over 60 lines, the median over 12, a module over 500
"""
import argparse, json, statistics, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

def exported_cells(nbs:Path=ROOT/"nbs", skip:tuple=()):
    "(notebook, cell id, lines of code) of every exported cell, but those of the folders in `skip`."
    for nb in sorted(nbs.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in nb.parts or nb.relative_to(nbs).parts[0] in skip: continue
        for c in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
            if c["cell_type"] != "code": continue
            lines = "".join(c["source"]).splitlines()
            if not any(l.strip() in ("#| export", "#| exporti") for l in lines[:3]): continue
            code = [l for l in lines if l.strip() and not l.startswith("#|")]
            yield nb.relative_to(nbs), c.get("id"), len(code)

def module_lines(pkg:Path=ROOT/"gaia_mas", skip:tuple=()):
    "(module, lines) of every library module but the index nbdev writes and the subpackages in `skip`."
    return [(p.relative_to(pkg.parent), len(p.read_text(encoding="utf-8").splitlines()))
            for p in sorted(pkg.rglob("*.py")) if p.name != "_modidx.py" and p.relative_to(pkg).parts[0] not in skip]

def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="fail when a limit is broken")
    p.add_argument("--max-cell", type=int, default=60); p.add_argument("--max-median", type=float, default=12)
    p.add_argument("--max-module", type=int, default=500)
    p.add_argument("--skip", action="append", default=[], help="a part to leave out, e.g. rag (repeatable)")
    a = p.parse_args(argv)
    cells = list(exported_cells(skip=tuple(a.skip)))
    sizes = [n for *_, n in cells]
    med = statistics.median(sizes)
    big = [(nb, cid, n) for nb, cid, n in cells if n > a.max_cell]
    long = [(m, n) for m, n in module_lines(skip=tuple(a.skip)) if n > a.max_module]
    print(f"{len(sizes)} exported cells{' without ' + ', '.join(a.skip) if a.skip else ''}: median {med:g} lines, "
          f"largest {max(sizes)}")
    for nb, cid, n in big: print(f"  cell over {a.max_cell} lines: {nb} #{cid}: {n}")
    for m, n in long: print(f"  module over {a.max_module} lines: {m}: {n}")
    ok = not big and not long and med <= a.max_median
    return 0 if ok or not a.check else 1

if __name__ == "__main__": sys.exit(main())
