"""Benchmarks of the RAG knowledge base, SQLite and PostgreSQL side by side, in one run.

    python bench/rag_retrieval.py [--backends sqlite,postgres] [--sizes 1000,10000,100000] [--out bench/out/rag_retrieval.json]

1. Retrieval quality on the golden file (nbs/samples/kb/golden.jsonl): recall@5 and MRR over source documents,
   for keyword, semantic (offline HashEmbeddings) and hybrid search.
2. Ingest throughput of the sample collection (parse + chunk + embed + write) and, for the synthetic sizes,
   bulk write throughput and index size per 1,000 chunks.
3. Query latency p50/p95 at each size for keyword and vector search, next to bm25s (keyword) and a NumPy
   brute-force cosine (vector) over the same chunks and vectors.

The synthetic collection repeats the sample chunks with variations: each copy drops and swaps a few words and
adds a few filler words, and its vector is the original's plus Gaussian noise, renormalised (embedding 100k
variants with the pure-Python embedder would dominate the run without changing what is measured).
Nothing here runs in CI.
"""
from __future__ import annotations
import argparse, contextlib, json, os, random, statistics, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("OPIK_TRACK_DISABLE", "true")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one BLAS thread, like the database engines; threads fighting over 2 shared cores made NumPy's times erratic

from gaia_mas.rag.kb.api import HashEmbeddings, open_kb, query_terms  # noqa: E402
from gaia_mas.rag.kb.ingest import ingest, sample_dir  # noqa: E402


def golden() -> list[dict]:
    return [json.loads(l) for l in (sample_dir()/"golden.jsonl").read_text().splitlines() if l.strip()]


def quality(kb, k: int = 5) -> dict:
    "recall@k and MRR over source file names, per mode."
    out = {}
    for mode in ("keyword", "semantic", "hybrid"):
        rec, rr = [], []
        for g in golden():
            names = []
            for h in kb.search(g["question"], mode=mode, k=k):
                n = Path(h.source).name
                if n not in names: names.append(n)
            rel = set(g["relevant"])
            rec.append(len(rel & set(names)) / len(rel))
            rr.append(next((1 / r for r, n in enumerate(names, 1) if n in rel), 0.0))
        out[mode] = {"recall@5": round(statistics.mean(rec), 3), "mrr": round(statistics.mean(rr), 3)}
    return out


def pct(xs, p):
    xs = sorted(xs); return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def timed(fns: dict, queries, repeat=2) -> dict:
    """p50/p95 in milliseconds of each function over the queries, after a warm-up; the functions take turns on each query,
    so that a load spike on the shared machine hits all of them alike."""
    for q in queries[:5]:
        for fn in fns.values(): fn(q)
    ts = {k: [] for k in fns}
    for _ in range(repeat):
        for q in queries:
            for k, fn in fns.items():
                t = time.perf_counter(); fn(q); ts[k].append((time.perf_counter() - t) * 1000)
    return {k: {"p50_ms": round(pct(v, 50), 3), "p95_ms": round(pct(v, 95), 3)} for k, v in ts.items()}


def variants(base: list[dict], n: int, rng: random.Random):
    "n (text, vector) pairs: the base chunks, then varied copies."
    import numpy as np
    filler = "system service request latency traffic client server network queue capacity node cluster".split()
    for i in range(n):
        b = base[i % len(base)]
        if i < len(base): yield b["text"], b["vector"]; continue
        w = b["text"].split()
        for _ in range(3):
            if len(w) > 4: j = rng.randrange(len(w) - 1); w[j], w[j + 1] = w[j + 1], w[j]
        if len(w) > 10: del w[rng.randrange(len(w))]
        w += rng.sample(filler, 3)
        v = np.asarray(b["vector"]) + np.asarray([rng.gauss(0, 0.03) for _ in range(len(b["vector"]))])
        yield " ".join(w) + f" v{i}", (v / np.linalg.norm(v)).tolist()


def fill(kb, pairs, start: int, stop: int, per_doc: int = 200, docs_per_batch: int = 10) -> float:
    "Write chunks start..stop as documents of per_doc chunks, in batches inside one bulk load as ingest does; seconds."
    t = time.perf_counter()
    batch, docs = [], []
    def flush():
        j = start_doc[0]; start_doc[0] += 1
        doc = {"source": f"/synthetic/doc{j:05d}.md", "hash": f"h{j}", "title": f"synthetic {j}", "filetype": "md", "metadata": {}}
        chunks = [{"text": tx, "citation": f"doc{j:05d}.md", "text_hash": str(hash(tx)),
                   "metadata": {"source": doc["source"], "title": doc["title"], "filetype": "md", "team": ["sre", "payments", "platform"][j % 3]}}
                  for tx, _ in batch]
        docs.append((doc, chunks, [v for _, v in batch])); batch.clear()
        if len(docs) >= docs_per_batch: write()
    def write():
        if hasattr(kb, "write_documents"): kb.write_documents(docs)
        else:
            for d in docs: kb.write_document(*d)
        docs.clear()
    start_doc = [start // per_doc]
    with getattr(kb, "bulk", contextlib.nullcontext)():
        for i, pair in enumerate(pairs):
            if i < start: continue
            if i >= stop: break
            batch.append(pair)
            if len(batch) == per_doc: flush()
        if batch: flush()
        if docs: write()
    return time.perf_counter() - t


def run_backend(name: str, url: str, sizes: list[int], log) -> dict:
    import numpy as np, bm25s
    res = {"backend": name}
    emb = HashEmbeddings()
    # 1-2: the sample collection
    from gaia_mas.rag.kb.ingest import read_sections
    read_sections(sample_dir()/"docs"/"outlier-detection.docx")  # warm up: the first Word file loads unstructured and spaCy
    from gaia_mas.rag.kb import base as kb_mod
    kb_mod._bucket.cache_clear()  # each backend starts with a cold feature-hash cache, so the ingest times compare
    with open_kb(url, emb) as kb:
        t = time.perf_counter(); rep = ingest(kb, [sample_dir()/"docs"]); dt = time.perf_counter() - t
        res["sample_ingest"] = {"documents": len(rep.added), "chunks": rep.chunks, "skipped": rep.skipped, "seconds": round(dt, 2),
                                "docs_per_s": round(len(rep.added) / dt, 1), "chunks_per_s": round(rep.chunks / dt, 1)}
        log(f"[{name}] sample ingest: {res['sample_ingest']}")
        res["quality"] = quality(kb); log(f"[{name}] quality: {res['quality']}")
        base = [{"text": h.text, "vector": v} for h, v in zip(kb.filter_search({"filetype": ["md", "html", "pdf", "docx"]}, 1000),
                                                              emb.embed_documents([h.text for h in kb.filter_search({"filetype": ["md", "html", "pdf", "docx"]}, 1000)]))]
        for s in kb.sources(): kb.remove(s)
    # 3: synthetic sizes
    queries = [g["question"] for g in golden()]
    qvecs = {q: emb.embed_query(q) for q in queries}
    rng, pairs_all, levels = random.Random(0), [], []
    gen = variants(base, max(sizes), rng)
    with open_kb(url, emb) as kb:
        done = 0
        for n in sizes:
            new = [next(gen) for _ in range(n - done)]
            pairs_all += new
            secs = fill(kb, iter(pairs_all), done, n)
            st = kb.stats(); done = n
            texts = [t for t, _ in pairs_all]; mat = np.asarray([v for _, v in pairs_all], dtype=np.float32)
            retr = bm25s.BM25(); retr.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
            lvl = {"chunks": st["chunks"], "write_chunks_per_s": round((len(new)) / secs, 1), "size_mb": round(st["size_bytes"] / 2**20, 1),
                   "kb_per_1000_chunks": round(st["size_bytes"] / 1024 / st["chunks"] * 1000, 1),
                   **timed({"keyword": lambda q: kb.rank_keyword(query_terms(q), 5, []),
                            "bm25s": lambda q: retr.retrieve(bm25s.tokenize([q], stopwords="en", show_progress=False), k=5, show_progress=False)}, queries),
                   **timed({"vector": lambda q: kb.rank_vector(qvecs[q], 5, []),
                            "numpy": lambda q: np.argpartition(-(mat @ np.asarray(qvecs[q], dtype=np.float32)), 5)[:5]}, queries),
                   **timed({"hybrid_search": lambda q: kb.search(q, mode="hybrid", k=5)}, queries, repeat=1)}
            lvl["keyword_vs_bm25s"] = round(lvl["keyword"]["p50_ms"] / max(lvl["bm25s"]["p50_ms"], 1e-6), 2)
            lvl["vector_vs_numpy"] = round(lvl["vector"]["p50_ms"] / max(lvl["numpy"]["p50_ms"], 1e-6), 2)
            levels.append(lvl); log(f"[{name}] {n} chunks: {json.dumps(lvl)}")
    res["levels"] = levels
    return res


def table(results: list[dict]) -> str:
    out = ["## Retrieval quality (golden file, 48 questions; semantic = offline HashEmbeddings)", "",
           "| backend | mode | recall@5 | MRR |", "|---|---|---|---|"]
    for r in results:
        for m, q in r["quality"].items(): out.append(f"| {r['backend']} | {m} | {q['recall@5']} | {q['mrr']} |")
    out += ["", "## Ingest of the sample collection", "", "| backend | docs | chunks | skipped | seconds | docs/s | chunks/s |", "|---|---|---|---|---|---|---|"]
    for r in results:
        s = r["sample_ingest"]; out.append(f"| {r['backend']} | {s['documents']} | {s['chunks']} | {len(s['skipped'])} | {s['seconds']} | {s['docs_per_s']} | {s['chunks_per_s']} |")
    out += ["", "## Query latency (ms, p50 / p95) and size", "",
            "| backend | chunks | write chunks/s | KiB per 1k chunks | keyword | bm25s | ratio | vector | numpy | ratio | hybrid search() |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    f = lambda d: f"{d['p50_ms']:.2f} / {d['p95_ms']:.2f}"
    for r in results:
        for l in r["levels"]:
            out.append(f"| {r['backend']} | {l['chunks']} | {l['write_chunks_per_s']} | {l['kb_per_1000_chunks']} | {f(l['keyword'])} | {f(l['bm25s'])} | "
                       f"{l['keyword_vs_bm25s']}x | {f(l['vector'])} | {f(l['numpy'])} | {l['vector_vs_numpy']}x | {f(l['hybrid_search'])} |")
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backends", default="sqlite,postgres"); p.add_argument("--sizes", default="1000,10000,100000")
    p.add_argument("--out", type=Path, help="also write the results as JSON here")
    a = p.parse_args(argv)
    sizes = sorted(int(s) for s in a.sizes.split(","))
    log = lambda m: print(m, file=sys.stderr, flush=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="gaia_rag_bench_") as tmp:
        for b in a.backends.split(","):
            if b == "sqlite": results.append(run_backend("sqlite", f"sqlite:///{tmp}/bench.sqlite", sizes, log))
            elif b == "postgres":
                from gaia_mas.core.pg_server import postgres_server
                with postgres_server() as url: results.append(run_backend("postgres", url, sizes, log))
            else: p.error(f"unknown backend {b!r}")
    print(table(results))
    if a.out: a.out.parent.mkdir(parents=True, exist_ok=True); a.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__": main()
