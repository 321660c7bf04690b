"""Keyword search's index kept in step with the knowledge base: writes and removals from other objects and threads,
and chunk ids that SQLite hands out again after a removal."""
import threading
from gaia_mas.rag.kb.api import HashEmbeddings, open_kb
from gaia_mas.rag.kb.ingest import ingest
from gaia_mas.rag.kb.keyword import KeywordIndex

QUERY = "retry backoff breaker timeout budget"


def names(hits): return [h.source.rsplit("/", 1)[-1] for h in hits]


def test_a_reused_chunk_id_is_searched_by_its_new_words(tmp_path):
    "The last document's chunks removed and another's written: SQLite gives them the same ids, with other words."
    a, b, c = (tmp_path/n for n in ("a.md", "b.md", "c.md"))
    a.write_text("# Zebras\n\nZebras graze on the open savanna in herds.\n")
    b.write_text("# Penguins\n\nPenguins swim in cold southern water.\n")
    c.write_text("# Camels\n\nCamels cross the desert for days without water.\n")
    url = f"sqlite:///{tmp_path/'kb.sqlite'}"
    reader, writer = open_kb(url, HashEmbeddings(64)), open_kb(url, HashEmbeddings(64))
    ingest(writer, [a, b])
    assert names(reader.search("penguins", mode="keyword")) == ["b.md"]
    before = {i for i, _ in writer._chunk_versions()}
    writer.remove(str(b.resolve())); ingest(writer, [c])
    assert {i for i, _ in writer._chunk_versions()} == before  # the same ids, now holding c.md's chunks
    assert not list(reader.search("penguins", mode="keyword"))
    assert names(reader.search("camels desert", mode="keyword")) == ["c.md"]
    reader.close(); writer.close()


def test_the_index_matches_the_file_after_concurrent_writes(tmp_path, docs):
    "Readers search by keyword in threads while a writer ingests and removes: the kept index ends as a fresh one."
    url = f"sqlite:///{tmp_path/'kb.sqlite'}"
    with open_kb(url, HashEmbeddings(64)) as kb: ingest(kb, [docs/"circuit-breakers.md"])
    stop, errors, searches = threading.Event(), [], []
    def reader():
        try:
            with open_kb(url, HashEmbeddings(64), create=False) as r:
                while not stop.is_set(): r.search(QUERY, mode="keyword", k=5); searches.append(1)
        except Exception as e: errors.append(e)
    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads: t.start()
    try:
        with open_kb(url, HashEmbeddings(64)) as kb:
            ingest(kb, [docs]); kb.remove(str((docs/"circuit-breakers.md").resolve()))
    finally:
        stop.set()
        for t in threads: t.join(timeout=60)
    assert not errors and searches
    with open_kb(url, HashEmbeddings(64)) as kb:
        kept = kb.rank_words(QUERY, 20, [])
        fresh = KeywordIndex().refresh(None, kb._chunk_versions, kb.rows).top(QUERY, 20)
        assert kept and kept == fresh
        assert "circuit-breakers.md" not in names(kb.search(QUERY, mode="keyword", k=10))


def test_a_filter_keeps_keyword_search_to_its_chunks(tmp_path, docs):
    with open_kb(tmp_path/"kb.sqlite", HashEmbeddings(64)) as kb:
        ingest(kb, [docs/"circuit-breakers.md"], meta={"team": "a"}); ingest(kb, [docs/"load-balancing.md"], meta={"team": "b"})
        assert set(names(kb.search("load balancing breaker", mode="keyword", k=10, filters={"team": "b"}))) == \
            {"load-balancing.md"}
