"""Write tests/README.md: each module, the notebook whose cells test it, and the pytest files that start its processes.

Run: python tools/tests_map.py          (writes tests/README.md)
     python tools/tests_map.py --check  (exit 1 when tests/README.md is not up to date; `make lint` runs it)
"""
import re, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARTS = {"core": "the foundation", "gaia": "the GAIA multi-agent graph", "rag": "the RAG system", "": "the commands"}
MARKERS = ("security", "real_server", "browser", "postgres", "process", "subprocess", "slow")

HEAD = """# Tests

Two kinds, both run by `make test` (and by CI):

- **Notebook tests**: the `test_eq` cells and live examples in `nbs/`, run as `nbdev_test` runs them. They document
  what each function does, one concept at a time, and run in seconds. A cell that starts a server, PostgreSQL, a
  browser or a model is flagged `#| slow`: `make test` runs it, `make test-fast` (`nbdev_test`) leaves it out. `make
  test` runs each notebook once, with `tools/docs.py --exec-only --flags slow` (nbdev_test's run, in two worker
  processes), which keeps the executed copies in `_build/nbs/`; `test_docs_site.py` builds the docs site from them
  (`tools/docs.py --reuse`) instead of running every notebook a second time.
- **Pytest tests**: the files here. Many start what a user starts (the `gaia-mas` command, servers, JupyterLab in
  chromium, PostgreSQL, llama.cpp, network namespaces) and check what the user sees; the others run in process.

Two tiers:

- `make test`: everything, the notebooks then pytest. CI runs it.
- `make test-fast`: the edit-test loop: the notebooks without their `#| slow` cells, and beside them the pytest tests
  that start no process, `-m "not (postgres or browser or real_server or process or subprocess or slow)"`, on two
  pytest-xdist workers (`make test-fast FAST_XDIST=` for one); the notebooks' report follows pytest's.
- Both run pytest on two pytest-xdist workers (`-n 2 --dist loadfile` for `make test`): most tests wait on a process,
  a server or a timeout, so two overlap on two cores. Each file stays on one worker, so its module fixtures run once;
  a session server (PostgreSQL, the model server) starts once per worker that needs it. One worker:
  `make test PYTEST_ARGS="-q tests"`.

Files are named after the module they test: `tests/<part>/test_<module>.py` (`tests/rag/<kb|workflows|service>/` for
the RAG system's three parts), with a suffix when a module has several (`test_app_failover.py`). What a test
starts is a pytest marker, not a folder: `postgres` (PostgreSQL),
`browser` (chromium), `real_server` (a real llama.cpp model or embeddings server), `process` (a server process:
`gaia-mas serve`, HAProxy, JupyterLab, `langgraph dev`), `subprocess` (another program run to its end: a `gaia-mas`
command, a script, the sandbox), `slow` (a minute or more); and `security` (an attack replayed). For example,
`python -m pytest -m "security and not browser" tests/rag`. tests/conftest.py holds the markers to the truth: a test
that starts a process its markers do not name fails, naming the marker to add (tests/test_markers.py shows it). Every
test has 300 s (pytest-timeout); a test that needs more says why in `@pytest.mark.timeout(N)`. Shared helpers are in
`tests/support/` (on the path through `pytest.ini`); the library's own test pieces are the scripted model
(`gaia_mas.core.scripted`), a fake OpenAI server and a live server (`gaia_mas.core.testing`), and the PostgreSQL server
(`gaia_mas.core.pg_server`).

This file is written by `python tools/tests_map.py`; `make lint` checks that it is up to date.
"""


def notebook_of(py:Path) -> str:
    "The notebook a module is exported from."
    m = re.search(r"File to edit: (\S+?)\.?\s*$", py.read_text(), re.M)
    return str((py.parent / m.group(1)).resolve().relative_to(ROOT)) if m else "?"


def markers_of(test:Path) -> list:
    "The markers a test file uses."
    text = test.read_text()
    found = set(re.findall(r"mark\.(\w+)", text)) | ({"postgres"} if re.search(r"\b(pg_url|kb_url)\b", text) else set())
    return [m for m in MARKERS if m in found]


def tests_for(folder:Path, mod:str, mods:list) -> list:
    "The pytest files for one module: test_<module>.py and test_<module>_*.py, unless a longer module name claims them."
    def owner(name): return max((m for m in mods if re.fullmatch(rf"test_{m}(_\w+)?\.py", name)), key=len, default=None)
    return sorted(p for p in folder.glob("test_*.py") if owner(p.name) == mod)


def cell(test:Path) -> str:
    "One test file as a table cell: its path and markers."
    marks = markers_of(test)
    return f"`{test.relative_to(ROOT / 'tests')}`" + (f" ({', '.join(marks)})" if marks else "")


def rows(part:str, claimed:set) -> list:
    "Table rows for one part of the package, its subpackages' modules included (tests/rag/kb/ for gaia_mas/rag/kb/)."
    pkg, out = ROOT / "gaia_mas" / part, []
    folders = [pkg] + (sorted(d for d in pkg.iterdir() if (d / "__init__.py").exists()) if part else [])
    for d in folders:
        pys, sub = sorted(d.glob("[a-z]*.py")), d.relative_to(ROOT / "gaia_mas")
        for py in pys:
            mod = py.stem
            tests = tests_for(ROOT / "tests" / sub, mod, [p.stem for p in pys])
            claimed.update(tests)
            name = ".".join(("gaia_mas", *sub.parts, mod))
            out.append(f"| `{name}` | `{notebook_of(py)}` | {'<br>'.join(cell(t) for t in tests) or '-'} |")
    return out


def render() -> str:
    "The whole tests/README.md."
    claimed, parts = set(), []
    for part, what in PARTS.items():
        parts += [f"\n## {part or 'top level'}: {what}\n", "| module | notebook tests | process tests |", "|---|---|---|"]
        parts += rows(part, claimed)
    others = sorted(set((ROOT / "tests").rglob("test_*.py")) - claimed - set((ROOT / "tests" / "support").rglob("*")))
    if others:
        parts += ["\n## Across modules\n", "| test file | markers |", "|---|---|"]
        parts += [f"| `{t.relative_to(ROOT / 'tests')}` | {', '.join(markers_of(t)) or '-'} |" for t in others]
    return HEAD + "\n".join(parts) + "\n"


if __name__ == "__main__":
    target, text = ROOT / "tests" / "README.md", render()
    if "--check" in sys.argv:
        ok = target.exists() and target.read_text() == text
        print("tests/README.md is up to date" if ok else "tests/README.md is out of date: run python tools/tests_map.py")
        sys.exit(0 if ok else 1)
    target.write_text(text)
    print(f"wrote {target.relative_to(ROOT)}")
