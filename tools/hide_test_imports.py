"""Keep the test helpers' imports off the docs pages: in every notebook, an import cell's test-only imports move into a
`#| hide` cell of their own, just before it.

    python tools/hide_test_imports.py          # rewrite the notebooks in nbs/ that need it, and name them
    python tools/hide_test_imports.py --check  # only name them; exit 1 if any would change

A test-only import is one of fastcore.test, unittest.mock (or unittest), gaia_mas.core.testing, or fastcore.xtras'
modified_env. Only cells made of import lines (and comments) are touched, never an exported cell. The other imports stay
where they were, visible, since the page's examples use them. A cell left with no import at all is dropped. Running it
again changes nothing: the hidden cell holds only test imports, and the visible one none.
"""
from __future__ import annotations
import argparse, hashlib, json, re, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEST_MODULES = ("fastcore.test", "unittest", "unittest.mock", "gaia_mas.core.testing")
_from = re.compile(r"^from\s+([\w.]+)\s+import\s+(.+)$")
_import = re.compile(r"^import\s+(.+)$")

def _test_only(line:str) -> tuple[list[str], list[str]]:
    "The line as (test imports, other imports), each a list of import lines."
    if m := _from.match(line):
        mod, names = m.groups()
        if mod in TEST_MODULES: return [line], []
        if mod == "fastcore.xtras" and [n.strip() for n in names.split(",")] == ["modified_env"]: return [line], []
        return [], [line]
    if m := _import.match(line):
        mods = [x.strip() for x in m.group(1).split(",")]
        test, other = [x for x in mods if x.split(" ")[0] in TEST_MODULES], [x for x in mods if x.split(" ")[0] not in TEST_MODULES]
        return ([f"import {', '.join(test)}"] if test else []), ([f"import {', '.join(other)}"] if other else [])
    return [], [line]

def split_cell(source:str) -> tuple[str, str]|None:
    "An import cell's (hidden test imports, the rest), or None when the cell is not one to change."
    lines = source.splitlines()
    if any(l.startswith("#|") for l in lines): return None   # exported, hidden or flagged already
    body = [l for l in lines if l.strip() and not l.lstrip().startswith("#")]
    if not body or not all(_from.match(l) or _import.match(l) for l in body): return None
    test, rest = [], []
    for l in lines:
        t, o = _test_only(l) if l.strip() and not l.lstrip().startswith("#") else ([], [l])
        test += t; rest += o
    if not test: return None
    return "#| hide\n" + "\n".join(test), "\n".join(rest).strip("\n")

def _cell(source:str, cid:str) -> dict:
    return {"cell_type": "code", "execution_count": None, "id": cid, "metadata": {}, "outputs": [],
            "source": source.splitlines(keepends=True)}

def fix(nb:dict) -> bool:
    "Split the notebook's import cells in place; whether it changed."
    out, changed = [], False
    for c in nb["cells"]:
        parts = split_cell("".join(c["source"])) if c["cell_type"] == "code" else None
        if parts is None: out.append(c); continue
        changed = True
        hidden, rest = parts
        out.append(_cell(hidden, hashlib.sha1((c.get("id", "") + "hide").encode()).hexdigest()[:8]))
        if any(l.strip() and not l.lstrip().startswith("#") for l in rest.splitlines()):
            c["source"] = rest.splitlines(keepends=True); out.append(c)
    nb["cells"] = out
    return changed

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only name the notebooks that would change")
    a = ap.parse_args(argv)
    changed = []
    for p in sorted((ROOT/"nbs").rglob("*.ipynb")):
        if any(part.startswith((".", "_")) for part in p.relative_to(ROOT/"nbs").parts): continue
        nb = json.loads(p.read_text())
        if fix(nb):
            changed.append(p.relative_to(ROOT))
            if not a.check: p.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    for p in changed: print(p)
    print(f"{len(changed)} notebook(s) {'would change' if a.check else 'changed'}", file=sys.stderr)
    return 1 if a.check and changed else 0

if __name__ == "__main__": sys.exit(main())
