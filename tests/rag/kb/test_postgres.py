"""The PostgreSQL engine's own behaviour: an old schema moved on open, bulk loads that defer the vector index, and
the full-text ranking that ranks only chunks holding a selective term on large tables, and keyword search's index
following writes."""
import json, logging
import pytest
import gaia_mas.rag.kb.postgres as K
from gaia_mas.rag.kb.api import HashEmbeddings, open_kb, query_terms
from gaia_mas.rag.kb.ingest import chunk_document, embed_text, ingest, iter_files, sample_dir

DOCS = sample_dir()/"docs"
GOLDEN = [json.loads(l) for l in (sample_dir()/"golden.jsonl").read_text().splitlines() if l.strip()]


# The PostgreSQL schema before chunk_terms: the keyword terms in a generated column of the wide chunks table.
OLD_SCHEMA = """
create extension if not exists vector;
create table kb_info(key text primary key, value text);
create table documents(source text primary key, hash text not null, title text, filetype text,
  modified text, n_chunks integer, ingested text, metadata jsonb);
create table chunks(id bigserial primary key, source text not null references documents(source) on delete cascade,
  ord integer, text text not null, citation text, text_hash text, metadata jsonb not null,
  tsv tsvector generated always as (setweight(to_tsvector('english', coalesce(metadata->>'title', '') || ' ' ||
      coalesce(metadata->>'section', '')), 'A') || to_tsvector('english', text)) stored);
create index chunks_source on chunks(source);
create index chunks_tsv on chunks using gin(tsv);
create index chunks_meta on chunks using gin(metadata);
create table fields(name text primary key);
create table embed_cache(model text, text_hash text, vector real[], primary key(model, text_hash));
alter table chunks add column embedding vector(64);
create index chunks_hnsw on chunks using hnsw (embedding vector_cosine_ops);
insert into kb_info values ('embedding_model', 'hash-64'), ('embedding_dim', '64');
"""
OLD_KEYWORD = ("select id, ts_rank(tsv, q, 1) from chunks, to_tsquery('english', %s) q where tsv @@ q "
               "order by 2 desc, id limit %s")


def test_old_schema_opens_and_ranks_the_same(pg_url, caplog):
    import psycopg
    from gaia_mas.core.pg_server import fresh_database
    emb = HashEmbeddings(64)
    with fresh_database(pg_url, "kb_old_schema") as url:
        with psycopg.connect(url, autocommit=True) as db:  # a knowledge base written by the old code
            db.execute(OLD_SCHEMA)
            for f, _ in iter_files([DOCS]):
                try: doc, chunks = chunk_document(f)
                except Exception: continue
                if not chunks: continue
                db.execute("insert into documents values (%s,%s,%s,%s,%s,%s,%s,%s)",
                           (doc["source"], doc["hash"], doc["title"], doc["filetype"], doc["modified"], len(chunks),
                            "2025-01-01T00:00:00", json.dumps(doc["metadata"])))
                vecs = emb.embed_documents([embed_text(c) for c in chunks])
                with db.cursor() as cur:
                    cur.executemany("insert into chunks(source, ord, text, citation, text_hash, metadata, embedding) "
                                    "values (%s,%s,%s,%s,%s,%s,%s::vector)",
                                    [(doc["source"], j, c["text"], c["citation"], c["text_hash"],
                                      json.dumps(c["metadata"]), str(v))
                                     for j, (c, v) in enumerate(zip(chunks, vecs))])
            old = {g["question"]: db.execute(OLD_KEYWORD, (" | ".join(query_terms(g["question"])), 20)).fetchall()
                   for g in GOLDEN}
            n_chunks = db.execute("select count(*) from chunks").fetchone()[0]
        with caplog.at_level(logging.WARNING, logger="gaia_mas.rag.kb.postgres"), open_kb(url) as kb:
            assert "chunk_terms" in caplog.text and kb.embeddings.model == "hash-64"
            for q, rows in old.items():
                new = kb.rank_keyword(query_terms(q), 20, [])
                assert [i for i, _ in new] == [i for i, _ in rows], q
                assert [s for _, s in new] == pytest.approx([s for _, s in rows]), q
            assert kb.stats()["chunks"] == n_chunks and not kb._q("select 1 from information_schema.columns "
                                                                "where table_name = 'chunks' and column_name = 'tsv'")
        caplog.clear()
        # once: the second open moves nothing
        with caplog.at_level(logging.WARNING, logger="gaia_mas.rag.kb.postgres"), open_kb(url) as kb:
            assert "chunk_terms" not in caplog.text and kb._q("select count(*) from chunk_terms")[0][0] == n_chunks
            rep = ingest(kb, [DOCS])  # and the migrated knowledge base takes writes as before
            assert not rep.added and not rep.updated and kb.search("circuit breaker half-open", k=1)


def synthetic(j, n, dim=16):
    "A document of n short chunks with vectors."
    import random
    rng = random.Random(j)
    doc = {"source": f"/synthetic/d{j}.md", "hash": f"h{j}", "title": f"doc {j}", "filetype": "md", "metadata": {}}
    meta = {"source": doc["source"], "title": doc["title"], "filetype": "md"}
    chunks = [{"text": f"chunk {j}-{i} word{rng.randrange(50)} word{rng.randrange(50)}", "citation": f"d{j}.md",
               "text_hash": f"{j}-{i}", "metadata": meta} for i in range(n)]
    vecs = [[rng.gauss(0, 1) for _ in range(dim)] for _ in range(n)]
    return doc, chunks, vecs


def test_bulk_load_defers_the_vector_index(pg_url, caplog):
    from gaia_mas.core.pg_server import fresh_database
    index = lambda kb: kb._q("select to_regclass('chunks_hnsw')")[0][0]
    with fresh_database(pg_url, "kb_bulk") as url, open_kb(url, HashEmbeddings(16)) as kb:
        kb.write_documents([synthetic(0, 10)])
        assert index(kb)
        with kb.bulk(), kb.bulk():  # a nested bulk load leaves the decisions to the outer one
            kb.write_documents([synthetic(j, 100) for j in range(1, 3)])
            assert index(kb)  # 200 chunks: below the threshold (256, or an eighth of the chunks at the start): kept up
            kb.write_documents([synthetic(j, 300) for j in range(4, 8)])
            assert not index(kb)  # past it: dropped before the batch is written ...
            with open_kb(url) as other: assert not index(other)  # ... and an opener leaves it to the loader
            q = synthetic(5, 300)[2][7]
            exact = kb.search("x", mode="semantic", k=3)  # without the index the search is exact
        assert index(kb) and kb.stats()["vectors"] == 1410  # ... and rebuilt at the end
        hit = kb.rank_vector(q, 1, [])[0]
        assert kb.rows([hit[0]])[hit[0]]["text"].startswith("chunk 5-7 ") and hit[1] == pytest.approx(1.0)
        assert [h.chunk_id for h in kb.search("x", mode="semantic", k=3)] == [h.chunk_id for h in exact]
        kb.db.execute("drop index chunks_hnsw")  # a bulk load killed before its end
        with caplog.at_level(logging.WARNING, logger="gaia_mas.rag.kb.postgres"), open_kb(url) as again:
            assert index(again) and "interrupted bulk load" in caplog.text


def test_postgres_keyword_search_ranks_chunks_with_a_selective_term(pg_url, monkeypatch):
    "On a large table, the full-text ranking ranks only chunks holding a lexeme found in under COMMON_TERM of them."
    from gaia_mas.core.pg_server import fresh_database
    with fresh_database(pg_url, "kb_prune") as url, open_kb(url, HashEmbeddings(32)) as kb:
        ingest(kb, [sample_dir()/"docs"], embed=False)
        kb.db.execute("analyze chunk_terms")
        q = "circuit breaker bulkhead"
        ranked = lambda n: [i for i, _ in kb.rank_keyword(query_terms(q), n, [])]
        every = ranked(200); text = {i: r["text"].lower() for i, r in kb.rows(every).items()}
        plain = every[:8]
        assert kb._selective(query_terms(q)) == []  # a small table: nothing is pruned
        monkeypatch.setattr(K, "PRUNE_MIN_CHUNKS", 0); monkeypatch.setattr(K, "COMMON_TERM", 0.1); kb._freq = None
        freq = kb._lexeme_freq()
        assert freq["circuit"] > K.COMMON_TERM > freq.get("bulkhead", 0), freq  # statistics from ANALYZE
        assert kb._selective(query_terms(q)) == ["bulkhead"]
        # the same ranking, over the chunks holding the selective term only
        assert ranked(8) == [i for i in every if "bulkhead" in text[i]][:8] != plain
        monkeypatch.setattr(K, "COMMON_TERM", 2.0); kb._freq = None  # every term selective: the plain ranking
        assert ranked(8) == plain


def test_keyword_search_follows_writes_from_another_object(pg_url, tmp_path):
    "Keyword search's index in this process follows a removal and a write made through another object."
    from gaia_mas.core.pg_server import fresh_database
    from gaia_mas.rag.kb.keyword import KeywordIndex
    a, b = tmp_path/"a.md", tmp_path/"b.md"
    a.write_text("# Zebras\n\nZebras graze on the open savanna in herds.\n")
    b.write_text("# Penguins\n\nPenguins swim in cold southern water.\n")
    with fresh_database(pg_url, "kb_keyword_index") as url:
        with open_kb(url, HashEmbeddings(64)) as reader, open_kb(url, HashEmbeddings(64)) as writer:
            ingest(writer, [a])
            assert not list(reader.search("penguins", mode="keyword"))
            ingest(writer, [b])
            assert [h.source for h in reader.search("penguins", mode="keyword")] == [str(b.resolve())]
            writer.remove(str(b.resolve()))
            assert not list(reader.search("penguins", mode="keyword"))
            kept = reader.rank_words("zebras savanna", 10, [])
            assert kept and kept == KeywordIndex().refresh(None, reader._chunk_versions, reader.rows).top("zebras savanna", 10)
