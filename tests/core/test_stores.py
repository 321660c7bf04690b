"""The project's stores: every SQLite file opened by `connect_sqlite` (one SQLite library per process), checkpoints that
rebuild only known types, and private files and folders. Attacks replayed: a crafted checkpoint that names `os.mkdir`
in the sessions file, the GAIA runner's checkpoints file and a PostgreSQL checkpoints table; stores read by others."""
import ast, json, os, sqlite3, stat, subprocess
from pathlib import Path
import ormsgpack, pytest

from cli_support import REPO, gaia, newcomer_env, GAIA
from gaia_mas.rag.ingest import sample_dir

OPENERS = {"sqlite3", "pysqlite3", "aiosqlite"}  # the modules that open SQLite files


def _sqlite_opens(path:Path) -> list[str]:
    "Where a module imports a SQLite library, or calls `connect` / `from_conn_string` on one, outside the factory."
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [f"{path}:{node.lineno} imports {n}" for n in names if n.split(".")[0] in OPENERS]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "from_conn_string" or (node.func.attr == "connect" and "sqlite" in ast.unparse(node.func)):
                found.append(f"{path}:{node.lineno} calls {ast.unparse(node.func)}")
    return found


def test_every_sqlite_file_is_opened_by_the_one_factory():
    "No module but gaia_mas/core/stores.py imports sqlite3, pysqlite3 or aiosqlite, or opens a SQLite file itself."
    pkg = REPO/"gaia_mas"
    found = [f for p in sorted(pkg.rglob("*.py")) if p != pkg/"core"/"stores.py" for f in _sqlite_opens(p)]
    assert not found, "open SQLite files with gaia_mas.core.stores.connect_sqlite:\n" + "\n".join(found)


def test_the_check_sees_a_direct_connect(tmp_path):
    (tmp_path/"m.py").write_text("import sqlite3\ndef f(p): return sqlite3.connect(p)\n")
    assert len(_sqlite_opens(tmp_path/"m.py")) == 2


def _evil_checkpoint(target:Path) -> bytes:
    "A checkpoint whose channel value is a msgpack extension that calls os.mkdir(target) when it is rebuilt."
    call = ormsgpack.Ext(1, ormsgpack.packb(("os", "mkdir", [str(target)])))
    return ormsgpack.packb({"v": 4, "id": "1f0-evil", "ts": "2026-11-27T00:00:00+00:00", "channel_values": {"history": call},
                            "channel_versions": {}, "versions_seen": {}, "updated_channels": None})


def _plant(db_path:Path, target:Path, thread_like:str="%") -> int:
    "Replace every stored checkpoint of the matching threads by the crafted one; how many rows were changed."
    with sqlite3.connect(db_path) as db:  # the attacker's own tool, not the project's
        n = db.execute("UPDATE checkpoints SET type='msgpack', checkpoint=? WHERE thread_id LIKE ?",
                       (_evil_checkpoint(target), thread_like)).rowcount
    return n


@pytest.mark.security
def test_a_crafted_checkpoint_in_the_sessions_file_is_refused(tmp_path):
    "`rag ask --session-id` on a session whose checkpoint names os.mkdir: reported as damaged, os.mkdir never runs."
    kb, target = f"sqlite:///{tmp_path/'kb.sqlite'}", tmp_path/"pwned"
    assert gaia("rag", "ingest", sample_dir()/"docs", "--kb", kb, "--embeddings", "hash").returncode == 0
    ask = ("rag", "ask", "--kb", kb, "--provider", "scripted", "--session-id", "breaker")
    assert gaia(*ask, "What is a circuit breaker?").returncode == 0
    assert _plant(tmp_path/"sessions.sqlite", target) > 0
    r = gaia(*ask, "How does it recover?")
    assert not target.exists(), "a stored checkpoint ran os.mkdir"
    assert r.returncode == 2 and "os.mkdir" in r.stderr and "session" in r.stderr, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    fresh = gaia(*ask[:-1], "another", "What is a circuit breaker?")  # other sessions of the same file still answer
    assert fresh.returncode == 0 and not target.exists(), fresh.stderr
