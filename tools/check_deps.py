"""Every third-party package gaia_mas imports is declared in settings.ini, in the core or in an extra.

Run: python tools/check_deps.py          (each imported top-level module, its distribution, and where it is declared)
     python tools/check_deps.py --check  (exit 1 naming each undeclared one; `make lint` runs it)

The imports are read from gaia_mas/ with `ast`: `import` statements (inside functions too) and the modules named as
text to `need(...)`, `importlib.import_module(...)` and `find_spec(...)`. Each module is mapped to the distribution that
installs it (importlib.metadata.packages_distributions, so run it in a venv that has every extra: `make install`).
The dev requirements do not count, since a user's install never has them, except for a module that is only looked up
with `find_spec` (probed, not imported: the code goes on without it, as core.pg_server does without PostgreSQL).
`nodeps_requirements` count: the built-in embedder's weights, which gaia_mas fetches itself on first use.
"""
import ast, shlex, sys
from configparser import ConfigParser
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
NAMED = {"need", "import_module", "find_spec"}  # calls whose first argument is a module's name

def declared() -> dict:
    "{distribution: where}: 'core', an extra's name, 'nodeps' or 'dev', from settings.ini."
    cfg = ConfigParser(delimiters=["="]); cfg.read(ROOT/"settings.ini", encoding="utf-8"); cfg = cfg["DEFAULT"]
    keys = ["requirements"] + [k for k in cfg if k.startswith("extra_")] + ["nodeps_requirements", "dev_requirements"]
    where = lambda k: {"requirements": "core"}.get(k, k.removeprefix("extra_").removesuffix("_requirements"))
    return {canonicalize_name(Requirement(r).name): where(k) for k in reversed(keys) for r in shlex.split(cfg[k])}

def _named(node) -> list:
    "The module a `need('m', ...)`, `import_module('m')` or `find_spec('m')` call names, if it is that call."
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    arg = node.args[0] if node.args else None
    ok = name in NAMED and isinstance(arg, ast.Constant) and isinstance(arg.value, str)
    return [arg.value] if ok else []

def imported(pkg:Path=ROOT/"gaia_mas") -> dict:
    "{top-level module: [(file, how)]} of each module gaia_mas imports, not the standard library's nor its own."
    found = {}
    for p in sorted(pkg.rglob("*.py")):
        for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(n, ast.Import): mods = [a.name for a in n.names]
            elif isinstance(n, ast.ImportFrom): mods = [n.module] if n.level == 0 and n.module else []
            elif isinstance(n, ast.Call): mods = _named(n)
            else: continue
            how = "probed" if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "find_spec" else "imported"
            for m in mods:
                top = m.split(".")[0]
                if top and top not in sys.stdlib_module_names and top != "gaia_mas" and "{" not in m:
                    found.setdefault(top, []).append((str(p.relative_to(ROOT)), how))
    return found

def report() -> list:
    "(module, distributions, where declared or None, first file) for each module gaia_mas imports."
    dists, decl, rows = packages_distributions(), declared(), []
    for mod, uses in sorted(imported().items(), key=lambda kv: kv[0].lower()):
        names = sorted({canonicalize_name(d) for d in dists.get(mod, [])})
        where = next((decl[d] for d in names if d in decl), None)
        if where == "dev" and any(how == "imported" for _, how in uses): where = None
        rows.append((mod, names, where, uses[0][0]))
    return rows

def main():
    rows, check = report(), "--check" in sys.argv
    for mod, names, where, f in [] if check else rows:
        print(f"{mod:24} {', '.join(names) or '(not installed here)':32} {where or 'NOT DECLARED'}")
    bad = [r for r in rows if r[2] is None]
    for mod, names, _, f in bad:
        print(f"{f} imports {mod} ({', '.join(names) or 'not installed'}), which settings.ini does not declare: add "
              "it to requirements (the core) or to an extra_NAME line", file=sys.stderr)
    if check: print(f"check_deps: {len(rows)} third-party modules imported, {len(bad)} undeclared")
    sys.exit(1 if check and bad else 0)

if __name__ == "__main__": main()
