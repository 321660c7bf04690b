"""The project's stores: every SQLite file opened by `connect_sqlite` (one SQLite library per process), checkpoints that
rebuild only known types, and private files and folders. Attacks replayed: a crafted checkpoint that names `os.mkdir`
in the sessions file and in the GAIA runner's checkpoints file (PostgreSQL: tests/rag/workflows/test_system_checkpoints.py);
stores other users could read."""
import ast, json, os, sqlite3, stat, subprocess
from pathlib import Path
import pytest

from cli_support import GAIA, REPO, gaia, newcomer_env
from crafted_checkpoint import plant
from gaia_mas.rag.kb.ingest import sample_dir

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


def _saver_calls(path:Path) -> list[str]:
    "Where a module makes a LangGraph checkpointer (`...Saver(...)`) without giving it `serde`."
    calls = [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Call)]
    return [f"{path}:{n.lineno} {ast.unparse(n)}" for n in calls if ast.unparse(n.func).endswith("Saver")
            and not any(k.arg == "serde" for k in n.keywords)]


@pytest.mark.security
def test_every_checkpointer_gets_the_strict_serializer():
    "Every checkpointer gaia_mas makes is given `serde` (`checkpoint_serde()`), so none rebuilds arbitrary types."
    found = [f for p in sorted((REPO/"gaia_mas").rglob("*.py")) for f in _saver_calls(p)]
    assert not found, "give each checkpointer serde=checkpoint_serde():\n" + "\n".join(found)
    assert "checkpoint_serde()" in (REPO/"gaia_mas"/"rag"/"workflows"/"system.py").read_text()


def test_the_check_sees_a_direct_connect(tmp_path):
    (tmp_path/"m.py").write_text("import sqlite3\ndef f(p): return sqlite3.connect(p)\n")
    assert len(_sqlite_opens(tmp_path/"m.py")) == 2


@pytest.mark.security
@pytest.mark.subprocess
def test_a_crafted_checkpoint_in_the_sessions_file_is_refused(tmp_path):
    "`rag ask --session-id` on a session whose checkpoint names os.mkdir: reported as damaged, os.mkdir never runs."
    kb, target = f"sqlite:///{tmp_path/'kb.sqlite'}", tmp_path/"pwned"
    assert gaia("rag", "ingest", sample_dir()/"docs", "--kb", kb, "--embeddings", "hash").returncode == 0
    ask = ("rag", "ask", "--kb", kb, "--provider", "scripted", "--session-id", "breaker")
    assert gaia(*ask, "What is a circuit breaker?").returncode == 0
    assert plant(tmp_path/"sessions.sqlite", target) > 0
    r = gaia(*ask, "How does it recover?")
    assert not target.exists(), "a stored checkpoint ran os.mkdir"
    assert r.returncode == 2 and "os.mkdir" in r.stderr and "session" in r.stderr, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    fresh = gaia(*ask[:-1], "another", "What is a circuit breaker?")  # other sessions of the same file still answer
    assert fresh.returncode == 0 and not target.exists(), fresh.stderr


def _mode(p:Path) -> int: return stat.S_IMODE(p.stat().st_mode)


@pytest.mark.security
@pytest.mark.subprocess
def test_a_new_users_stores_are_private_under_umask_022(tmp_path):
    "A newcomer's cache folder is 0700 and the knowledge base, sessions, run log and checkpoints in it 0600."
    env = newcomer_env(tmp_path/"home")
    def run(*args):
        r = subprocess.run([*GAIA, *map(str, args)], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
                           preexec_fn=lambda: os.umask(0o022))
        assert r.returncode == 0, r.stderr
    run("rag", "ingest", sample_dir()/"docs", "--embeddings", "hash")
    run("rag", "ask", "What is a circuit breaker?", "--provider", "scripted", "--session-id", "breaker")
    run("ask", "What is 2+2?", "--provider", "scripted")
    run("run", REPO/"nbs"/"samples"/"gaia", "--provider", "scripted", "--limit", "1")
    cache = tmp_path/"home"/".cache"/"gaia_mas"
    names = {p.name for p in cache.rglob("*")}
    assert {"kb.sqlite", "sessions.sqlite", "checkpoints.sqlite", "logs"} <= names, names
    wrong = {str(p.relative_to(cache)): oct(_mode(p)) for p in [cache, *cache.rglob("*")]
             if _mode(p) != (0o700 if p.is_dir() else 0o600)}
    assert wrong == {}, wrong


@pytest.mark.security
@pytest.mark.subprocess
def test_a_crafted_checkpoint_in_the_gaia_runners_file_is_refused(tmp_path):
    "`gaia-mas run` resuming a task whose stored checkpoint names os.mkdir: that task is an error, os.mkdir never runs."
    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.checkpoint.sqlite import SqliteSaver
    from gaia_mas.gaia.runs.checkpoints import run_key, thread_id_for
    cache, out, target = tmp_path/"cache", tmp_path/"results.jsonl", tmp_path/"pwned"
    cache.mkdir()
    with sqlite3.connect(cache/"checkpoints.sqlite") as conn:  # an unfinished run of sample-1, as the runner keeps it
        cfg = {"configurable": {"thread_id": thread_id_for("sample-1", run_key(out)), "checkpoint_ns": ""}}
        SqliteSaver(conn).put(cfg, empty_checkpoint(), {}, {})
    assert plant(cache/"checkpoints.sqlite", target) == 1
    r = gaia("run", REPO/"nbs"/"samples"/"gaia", "--provider", "scripted", "--limit", "2", "--out", out,
             "--cache-dir", cache, cwd=tmp_path)
    assert not target.exists(), "a stored checkpoint ran os.mkdir"
    recs = {json.loads(l)["task_id"]: json.loads(l) for l in out.read_text().splitlines()}
    assert "UnsafeCheckpoint" in recs["sample-1"]["error"] and "os.mkdir" in recs["sample-1"]["error"], recs["sample-1"]
    assert recs["sample-2"]["model_answer"], (r.stderr, recs)  # the other task still answers
