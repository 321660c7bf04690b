"""Clear failures from the rag commands: a corrupt KB file, a folder given as the KB, an unwritable path, a foreign
SQLite file, a locked database, URLs with passwords, and file names with terminal escapes. One line each, the right
exit code, no traceback unless -v, and nothing echoed that should not be."""
import json, os, sqlite3, threading, time
from pathlib import Path
import pytest

from rag_serve import run_measured

pytestmark = pytest.mark.security

COMMANDS = [("search", "breaker"), ("stats",), ("rm", "/nowhere"), ("ingest", "{docs}")]


def rag(*args, timeout=300):
    return run_measured("rag", *map(str, args), timeout=timeout)[0]


@pytest.fixture
def docs(tmp_path):
    d = tmp_path/"docs"; d.mkdir(); (d/"a.md").write_text("# A\n\nA circuit breaker stops calls.\n"); return d


def _one_line(p, code:int):
    assert p.returncode == code, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    return p.stderr.strip()


@pytest.mark.subprocess
@pytest.mark.parametrize("cmd", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_corrupt_kb_file(tmp_path, docs, cmd):
    bad = tmp_path/"kb.sqlite"; bad.write_bytes(b"SQLite format 3\x00" + os.urandom(4096))
    err = _one_line(rag(*[c.format(docs=docs) for c in cmd], "--kb", f"sqlite:///{bad}", "--embeddings", "hash"), 2)
    assert "knowledge base" in err and "--kb" in err, err


@pytest.mark.subprocess
@pytest.mark.parametrize("cmd", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_folder_given_as_the_kb(tmp_path, docs, cmd):
    err = _one_line(rag(*[c.format(docs=docs) for c in cmd], "--kb", f"sqlite:///{tmp_path}", "--embeddings", "hash"), 2)
    assert "--kb" in err, err


@pytest.mark.subprocess
def test_unwritable_path(tmp_path, docs):
    (tmp_path/"file").write_text("x")  # a file where a folder should be
    err = _one_line(rag("ingest", docs, "--kb", f"sqlite:///{tmp_path}/file/kb.sqlite", "--embeddings", "hash"), 2)
    assert "kb.sqlite" in err or "--kb" in err, err


@pytest.mark.subprocess
def test_foreign_sqlite_is_refused_and_left_untouched(tmp_path, docs):
    app = tmp_path/"app.db"; db = sqlite3.connect(app); db.execute("create table users(name)"); db.commit(); db.close()
    before = app.read_bytes()
    for cmd in (("search", "breaker"), ("ingest", docs), ("stats",)):
        err = _one_line(rag(*cmd, "--kb", f"sqlite:///{app}", "--embeddings", "hash"), 2)
        assert "another application's" in err and "untouched" in err, err
    assert app.read_bytes() == before and not Path(f"{app}-wal").exists()


@pytest.mark.subprocess
def test_passwords_are_masked_in_every_url(tmp_path):
    for url in ("postgresql://admin:hunter2@127.0.0.1:1/kb", "mysql://root:hunter2@db.example/kb"):
        for cmd in (("search", "x"), ("stats",), ("ingest", tmp_path)):
            p = rag(*cmd, "--kb", url, timeout=120)
            assert p.returncode == 2 and "hunter2" not in p.stderr + p.stdout and "Traceback" not in p.stderr, p.stderr
            assert "***" in p.stderr, p.stderr


@pytest.mark.subprocess
def test_verbose_shows_the_traceback(tmp_path, docs):
    p = rag("stats", "--kb", f"sqlite:///{tmp_path}", "-v")
    assert p.returncode == 2 and "Traceback" in p.stderr


def test_locked_database_fails_the_ingest(tmp_path, docs, monkeypatch):
    "Files skipped because the database is locked make `rag ingest` exit 1, not 0."
    from gaia_mas.rag.cli import rag_main
    from gaia_mas.rag.kb.api import SQLiteKB
    def locked(self, *a, **kw): raise sqlite3.OperationalError("database is locked")
    monkeypatch.setattr(SQLiteKB, "write_documents", locked)
    assert rag_main(["rag", "ingest", str(docs), "--kb", f"sqlite:///{tmp_path}/kb.sqlite", "--embeddings", "hash", "--no-progress"]) == 1


@pytest.mark.subprocess
def test_locked_database_for_real(tmp_path, docs):
    "Another process holds the write lock for longer than the busy timeout: the ingest reports it and exits 1."
    kb = f"sqlite:///{tmp_path}/kb.sqlite"
    assert rag("ingest", docs, "--kb", kb, "--embeddings", "hash").returncode == 0
    (docs/"b.md").write_text("# B\n\nmore\n")
    db = sqlite3.connect(tmp_path/"kb.sqlite", isolation_level=None); db.execute("begin exclusive")
    try: p = rag("ingest", docs, "--kb", kb, "--embeddings", "hash", timeout=200)
    finally: db.execute("rollback"); db.close()
    assert p.returncode == 1 and "locked" in p.stderr and "Traceback" not in p.stderr, (p.returncode, p.stderr)


@pytest.mark.subprocess
def test_escapes_in_names_and_text_are_not_printed_raw(tmp_path):
    d = tmp_path/"docs"; d.mkdir()
    evil = d/"report\x1b[2J\x1b[31mRED\nfake line.md"
    evil.write_text("# Title \x1b]0;pwned\x07\n\nbreaker text \x1b[5mblink\n")
    kb = f"sqlite:///{tmp_path}/kb.sqlite"
    assert rag("ingest", d, "--kb", kb, "--embeddings", "hash").returncode == 0
    p = rag("search", "breaker", "--kb", kb, "--mode", "keyword")
    assert p.returncode == 0 and "\x1b" not in p.stdout and "\\x1b" in p.stdout and "RED\\nfake" in p.stdout, p.stdout


@pytest.mark.subprocess
def test_ask_where_nothing_can_be_written_is_one_line(tmp_path, docs):
    "`rag ask` with a knowledge base or a sessions file where no file can be made: one line each time, no traceback."
    kb = f"sqlite:///{tmp_path}/kb.sqlite"
    assert rag("ingest", docs, "--kb", kb, "--embeddings", "hash").returncode == 0
    for _ in range(3):  # the traceback of aiosqlite's thread came on some runs only
        err = _one_line(rag("ask", "What is a circuit breaker?", "--provider", "scripted", "--kb",
                            "sqlite:////proc/kb.sqlite"), 2)
        assert "no knowledge base at /proc/kb.sqlite" in err and "gaia-mas rag ingest" in err, err
        err = _one_line(rag("ask", "What is a circuit breaker?", "--provider", "scripted", "--kb", kb, "--session-id",
                            "s1", "--sessions", "sqlite:////proc/sessions.sqlite"), 2)
        assert "/proc/sessions.sqlite" in err and "--sessions" in err, err


@pytest.mark.subprocess
def test_missing_key_names_the_dry_run(tmp_path, docs):
    kb = f"sqlite:///{tmp_path}/kb.sqlite"
    assert rag("ingest", docs, "--kb", kb, "--embeddings", "hash").returncode == 0
    p = rag("ask", "What is a circuit breaker?", "--kb", kb, "--provider", "openai")
    err = _one_line(p, 2)
    assert "OPENAI_API_KEY" in err and "--provider scripted" in err, err
