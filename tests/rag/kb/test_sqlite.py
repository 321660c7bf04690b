"""The SQLite engine's own behaviour: readers beside a writer in other threads and processes."""
import threading
import pytest
from gaia_mas.rag.kb.api import HashEmbeddings, open_kb
from gaia_mas.rag.kb.sqlite import SQLiteKB, sqlite_module
from gaia_mas.rag.kb.ingest import ingest

def test_concurrent_readers_while_ingesting(tmp_path, docs):
    url = f"sqlite:///{tmp_path/'kb.sqlite'}"
    with open_kb(url, HashEmbeddings(64)) as kb: ingest(kb, [docs/"circuit-breakers.md"])
    errors, stop, searches = [], threading.Event(), []
    def reader():
        try:
            r = open_kb(url, HashEmbeddings(64), create=False)
            try:
                while not stop.is_set(): r.search("circuit breaker", k=3); searches.append(1)
            finally: r.close()
        except Exception as e: errors.append(e)
    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads: t.start()
    try:
        with open_kb(url, HashEmbeddings(64)) as kb: rep = ingest(kb, [docs])
    finally:
        stop.set()
        for t in threads: t.join(timeout=30)
    assert not errors and len(rep.added) == 6 and searches


def test_readers_do_not_write(tmp_path, docs):
    "Opening an existing knowledge base to read takes no write lock, so it works while a writer holds one."
    url = f"sqlite:///{tmp_path/'kb.sqlite'}"
    with open_kb(url, HashEmbeddings(64)) as kb: ingest(kb, [docs/"circuit-breakers.md"])
    w = sqlite_module().connect(tmp_path/"kb.sqlite", timeout=0.1, isolation_level=None)
    try:
        w.execute("begin immediate")  # another process in the middle of a write
        r = SQLiteKB(tmp_path/"kb.sqlite", HashEmbeddings(64), create=False)
        r._local.db.execute("pragma busy_timeout=100")
        try: assert r.search("circuit breaker", k=2)
        finally: r.close()
    finally: w.execute("rollback"); w.close()
