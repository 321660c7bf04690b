"""The knowledge base against both engines: ingestion, idempotence, search modes, filters, bad input, consistency,
batched writes, and the same answers from SQLite and PostgreSQL."""
import json, shutil, statistics
from pathlib import Path
import pytest
from gaia_mas.rag.kb.api import ENGINE_METHODS, HashEmbeddings, PostgresKB, SQLiteKB, open_kb
from gaia_mas.rag.kb.ingest import chunk_document, embed_text, ingest, sample_dir

DOCS = sample_dir()/"docs"
GOLDEN = [json.loads(l) for l in (sample_dir()/"golden.jsonl").read_text().splitlines() if l.strip()]


class CountingEmbeddings(HashEmbeddings):
    "HashEmbeddings that counts the texts it embeds."
    def __init__(self, dim=64): super().__init__(dim); self.n = 0
    def embed_documents(self, texts): self.n += len(texts); return super().embed_documents(texts)


def test_ingest_and_search_every_mode(kb_url, docs):
    with open_kb(kb_url, HashEmbeddings(64)) as kb:
        rep = ingest(kb, [docs], meta={"collection": "test"})
        assert len(rep.added) == 7 and not rep.skipped and rep.chunks > 7
        s = kb.stats()
        assert s["documents"] == 7 and s["chunks"] == s["vectors"] == rep.chunks and s["embedding_model"] == "hash-64"
        assert {"text", "keyword", "vector"} <= set(s["index_bytes"]) and all(v > 0 for k, v in s["index_bytes"].items() if k != "metadata")
        for mode in ("keyword", "semantic", "hybrid"):
            hits = kb.search("What is a circuit breaker?", mode=mode, k=3)
            assert hits and not hits.warnings, mode
            assert hits[0].citation.startswith("circuit-breakers.md § "), (mode, [h.citation for h in hits])
            assert all(h.metadata["collection"] == "test" and h.source.endswith(tuple(h.citation.split(" ")[:1])) for h in hits)
        pdf = kb.search("hedged requests tail latency", mode="keyword", k=1)[0]
        assert pdf.citation == "timeout-budgets.pdf p. 2" and pdf.metadata["page"] == 2 and pdf.metadata["team"] == "payments"
        doc = kb.search("eject hosts consecutive errors", mode="keyword", k=1)[0]
        assert doc.citation.startswith("outlier-detection.docx § ")


def test_filters(kb_url, docs):
    with open_kb(kb_url, HashEmbeddings(64)) as kb:
        ingest(kb, [docs])
        for mode in ("keyword", "semantic", "hybrid"):
            hits = kb.search("retries", mode=mode, k=10, filters={"team": "payments"})
            assert hits and {h.metadata["team"] for h in hits} == {"payments"}, mode
        hits = kb.search("retries", k=10, filters={"year": {"gte": 2022, "lt": 2024}, "tags": ["retries", "timeouts"]})
        assert hits and all(2022 <= h.metadata["year"] < 2024 for h in hits)
        assert all({"retries", "timeouts"} & set(h.metadata["tags"]) for h in hits)
        html = kb.filter_search({"filetype": "html"}, k=20)
        assert html and {h.metadata["filetype"] for h in html} == {"html"} and html[0].metadata["tags"] == ["retries", "incident"]
        assert kb.filter_search({"source": {"prefix": str(docs/"rate")}}, k=20)[0].citation.startswith("rate-limiting.md")
        assert kb.filter_search({"modified": {"gte": "2000-01-01"}}, k=3)
        none = kb.search("retries", filters={"team": "nobody"})
        assert not none and "no passages matched" in none.warnings[0]
        with pytest.raises(ValueError, match="unknown filter field 'teem'.*team"): kb.search("x", filters={"teem": "sre"})
        with pytest.raises(ValueError, match="expected one of"): kb.search("x", filters={"year": {"after": 1}})


def test_bad_queries(kb_url, docs):
    with open_kb(kb_url, HashEmbeddings(64)) as kb:
        ingest(kb, [docs / "circuit-breakers.md"])
        for q in ("", "   "):
            with pytest.raises(ValueError, match="empty query"): kb.search(q)
        with pytest.raises(ValueError, match="unknown search mode"): kb.search("x", mode="fuzzy")
        with pytest.raises(ValueError, match="k must be"): kb.search("x", k=0)
        assert kb.search("') OR 1=1; drop table chunks; --", mode="keyword") is not None  # punctuation is not query syntax
        assert kb.stats()["chunks"] > 0


def test_idempotent_update_and_remove(kb_url, docs):
    emb = CountingEmbeddings()
    with open_kb(kb_url, emb) as kb:
        first = ingest(kb, [docs]); n = emb.n
        again = ingest(kb, [docs])
        assert len(again.unchanged) == 7 and not again.added and not again.updated and emb.n == n
        md = docs/"circuit-breakers.md"
        md.write_text(md.read_text() + "\n## Metrics\n\nExport breaker state transitions as counters.\n")
        upd = ingest(kb, [docs])
        assert len(upd.updated) == 1 and len(upd.unchanged) == 6
        assert emb.n - n <= 2  # only the new or changed chunks were embedded; the rest came from the cache
        assert kb.search("transitions counters", mode="keyword", k=1)[0].citation == "circuit-breakers.md § Metrics"
        md_chunks = kb.filter_search({"source": str(md.resolve())}, 50)
        assert len(md_chunks) == upd.chunks and kb.stats()["chunks"] == kb.stats()["vectors"]
        retag = ingest(kb, [docs/"idempotency.md"], meta={"team": "sre"})
        assert retag.updated and kb.search("idempotency key", k=1, filters={"team": "sre"})
        gone = kb.remove(str((docs/"load-balancing.md").resolve()))
        assert gone == [str((docs/"load-balancing.md").resolve())] and kb.stats()["documents"] == 6
        assert not kb.filter_search({"source": gone[0]}, 5)
        assert len(kb.remove(str(docs.resolve()))) == 6 and kb.stats()["documents"] == 0 and kb.stats()["chunks"] == 0


def test_bad_files_are_skipped(kb_url, tmp_path):
    d = tmp_path/"mixed"; d.mkdir()
    (d/"good.md").write_text("# Good\n\nBulkheads isolate thread pools.\n")
    (d/"broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    (d/"broken.docx").write_bytes(b"PK\x03\x04 not a zip")
    (d/"image.bin").write_bytes(b"\x00\x01")
    (d/"empty.txt").write_text("")
    (d/"bad-front.md").write_text("---\n- a list\n---\n# X\n\ntext\n")
    (d/".hidden.md").write_text("# hidden\n")
    with open_kb(kb_url, HashEmbeddings(64)) as kb:
        rep = ingest(kb, [d, tmp_path/"nope.md"])
        why = dict(rep.skipped)
        assert rep.added == [str((d/"good.md").resolve())]
        assert set(why) == {str(d/"broken.pdf"), str(d/"broken.docx"), str(d/"image.bin"), str(d/"empty.txt"), str(d/"bad-front.md"), str(tmp_path/"nope.md")}
        assert "unsupported file type '.bin'" in why[str(d/"image.bin")] and why[str(tmp_path/"nope.md")] == "no such file or folder"
        assert why[str(d/"empty.txt")] == "no text found" and "front matter" in why[str(d/"bad-front.md")]


def test_other_formats(kb_url, tmp_path):
    samples = sample_dir().parent
    d = tmp_path/"formats"; d.mkdir()
    for n in ("sample.pptx", "sample.xlsx", "sample.csv", "sample.json", "sample.txt"):
        if (samples/n).exists(): shutil.copy(samples/n, d/n)
    with open_kb(kb_url, HashEmbeddings(64)) as kb:
        rep = ingest(kb, [d])
        assert not rep.skipped and len(rep.added) == len(list(d.iterdir()))
        assert {h.metadata["filetype"] for h in kb.filter_search({"filetype": ["pptx", "xlsx", "csv", "json", "txt"]}, 50)} == \
               {p.suffix[1:] for p in d.iterdir()}


def test_semantic_off_then_backfilled(kb_url, docs, no_openai, monkeypatch):
    monkeypatch.setenv("GAIA_MAS_EMBEDDINGS", "none")  # no embedder at all (the built-in model is the default otherwise)
    with open_kb(kb_url) as kb:
        assert kb.embeddings is None
        rep = ingest(kb, [docs])
        assert not rep.semantic and "semantic search is off" in rep.summary() and rep.chunks
        sem = kb.search("circuit breaker", mode="semantic")
        assert list(sem) == [] and "semantic search is off" in sem.warnings[0] and "--mode keyword" in sem.warnings[0]
        hyb = kb.search("circuit breaker", mode="hybrid")
        assert hyb and "fell back to keyword search" in hyb.warnings[0]
    with open_kb(kb_url, HashEmbeddings(64)) as kb:
        again = ingest(kb, [docs])  # nothing changed, but the missing vectors are filled in
        assert len(again.unchanged) == 7 and kb.stats()["vectors"] == kb.stats()["chunks"]
        assert kb.search("circuit breaker", mode="semantic") and not kb.search("circuit breaker", mode="semantic").warnings
    with open_kb(kb_url) as kb:  # reopened with no embedder given: the offline one that built it is picked again
        assert kb.embeddings.model == "hash-64"
    with pytest.raises(ValueError, match="vectors were made by 'hash-64'"): open_kb(kb_url, HashEmbeddings(32))


def test_interrupted_ingest_leaves_whole_documents(kb_url, docs, monkeypatch):
    with open_kb(kb_url, HashEmbeddings(64)) as kb:
        real, calls = type(kb).write_documents, []
        def flaky(self, items):
            calls.append(items)
            if len(calls) == 3: raise KeyboardInterrupt  # stopped by the user before the third batch is written
            return real(self, items)
        monkeypatch.setattr(type(kb), "write_documents", flaky)
        with pytest.raises(KeyboardInterrupt): ingest(kb, [docs], batch=1)  # one document per batch
        monkeypatch.setattr(type(kb), "write_documents", real)
        s = kb.stats()
        assert s["documents"] == 2 and [len(c) for c in calls] == [1, 1, 1]
        assert s["chunks"] == len(kb.filter_search({"filetype": ["md", "html", "pdf", "docx"]}, 200))
        rep = ingest(kb, [docs])
        assert len(rep.unchanged) == 2 and len(rep.added) == 5 and kb.stats()["documents"] == 7


def test_write_is_atomic(kb_url, docs):
    "A failure inside write_document's transaction leaves the previous version of the document intact."
    from gaia_mas.rag.kb.ingest import chunk_document
    with open_kb(kb_url, HashEmbeddings(64)) as kb:
        ingest(kb, [docs/"circuit-breakers.md"])
        before = kb.stats()["chunks"]
        doc, chunks = chunk_document(docs/"circuit-breakers.md")
        bad = chunks + [{"text": None, "citation": "x", "text_hash": "x", "metadata": {}}]  # NOT NULL violation at the end
        with pytest.raises(Exception): kb.write_document({**doc, "hash": "new"}, bad, None)
        assert kb.stats()["chunks"] == before and kb.doc_hash(doc["source"]) != "new"


def test_missing_kb_and_bad_url(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"no knowledge base at .*missing.sqlite.*gaia-mas rag ingest"):
        open_kb(f"sqlite:///{tmp_path/'missing.sqlite'}", create=False)
    with pytest.raises(ValueError, match="unsupported knowledge base URL"): open_kb("mysql://x/y")


def test_each_engine_implements_the_interface():
    for engine in (SQLiteKB, PostgresKB):
        assert [n for n in ENGINE_METHODS if n not in vars(engine)] == [], engine


def items(kb, names):
    "(doc, chunks, vectors) for sample files."
    out = []
    for n in names:
        doc, chunks = chunk_document(DOCS/n)
        out.append((doc, chunks, kb.embed([embed_text(c) for c in chunks])))
    return out


def test_a_bad_document_does_not_sink_its_batch(kb_url):
    with open_kb(kb_url, HashEmbeddings(64)) as kb:
        good1, bad, good2 = items(kb, ["circuit-breakers.md", "idempotency.md", "rate-limiting.md"])
        assert not kb.write_documents([bad])  # an earlier, good version of the bad document
        before = kb.stats()["chunks"]
        null_text = {"text": None, "citation": "x", "text_hash": "x", "metadata": {}}  # violates NOT NULL
        broken = ({**bad[0], "hash": "new"}, bad[1] + [null_text], None)
        errors = kb.write_documents([good1, broken, good2])
        assert set(errors) == {bad[0]["source"]} and isinstance(errors[bad[0]["source"]], Exception)
        s = kb.stats()
        assert s["documents"] == 3 and s["chunks"] == before + len(good1[1]) + len(good2[1])
        assert kb.doc_hash(bad[0]["source"]) == bad[0]["hash"]  # the failed replacement left the old version whole
        assert kb.search("token bucket", mode="keyword", k=1)[0].citation.startswith("rate-limiting.md")
        assert kb.search("What is a circuit breaker?", mode="hybrid", k=1)[0].citation.startswith("circuit-breakers.md")
        with pytest.raises(Exception): kb.write_document(*broken)  # one document alone still raises


def test_ingest_batches_report_each_document(kb_url, tmp_path):
    d = tmp_path/"d"; d.mkdir()
    for n in ("circuit-breakers.md", "idempotency.md", "rate-limiting.md", "load-balancing.md"):
        (d/n).write_bytes((DOCS/n).read_bytes())
    with open_kb(kb_url, HashEmbeddings(64)) as kb:
        calls, real = [], kb.write_documents
        kb.write_documents = lambda its: calls.append([i[0]["source"] for i in its]) or real(its)
        rep = ingest(kb, [d], batch=10**6)
        assert len(calls) == 1 and len(calls[0]) == 4 and len(rep.added) == 4 and not rep.skipped
        assert rep.chunks == kb.stats()["chunks"]
        again = ingest(kb, [d, d/"idempotency.md"], batch=1)  # a file named twice is written once
        assert len(again.unchanged) == 5 and not again.added


def test_golden_set_same_on_both_engines(pg_url, tmp_path):
    "Semantic hits are identical on SQLite and PostgreSQL; keyword and hybrid find the relevant files as well on both."
    from gaia_mas.core.pg_server import fresh_database
    res = {}
    with fresh_database(pg_url, "kb_golden") as url:
        for name, u in (("sqlite", f"sqlite:///{tmp_path/'g.sqlite'}"), ("postgres", url)):
            with open_kb(u, HashEmbeddings()) as kb:
                ingest(kb, [DOCS])
                res[name] = {m: [[h.citation for h in kb.search(g["question"], mode=m, k=5)] for g in GOLDEN]
                             for m in ("keyword", "semantic", "hybrid")}
    assert res["sqlite"]["semantic"] == res["postgres"]["semantic"]
    for mode in ("keyword", "hybrid"):
        for name in res:
            recall = statistics.mean(len({c.split(" ")[0] for c in hits} & set(g["relevant"])) / len(g["relevant"])
                                     for g, hits in zip(GOLDEN, res[name][mode]))
            assert recall >= 0.95, (name, mode, recall)
