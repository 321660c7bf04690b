"""How hybrid search fuses keyword and semantic search, measured on five knowledge bases: the candidates side by side.

    python bench/rag_fusion.py [--keep DIR] [--corpora sample,pg50,py68,pyall,pgall] [--out bench/data/rag_fusion.json]

The knowledge bases (built-in all-MiniLM-L6-v2 embedder) and their golden sets:

- sample: the sample collection (nbs/samples/kb), 48 questions;
- pg50 / pgall: 50 pages of PostgreSQL 15's manual (those of bench/rag_real_corpus.py) and the whole manual (Debian's
  postgresql-doc-15), with bench/data/pg_golden.jsonl: 30 questions in the manual's words, 30 reworded;
- py68 / pyall: 68 module pages of Python's library reference and the whole reference (Debian's python3-doc), with
  bench/data/python_golden.jsonl: 40 literal and 40 reworded questions.

The bench installs the two Debian packages with apt when they are missing (as root), or says how. Each corpus x half
gets page-level recall@5 and MRR (through gaia_mas.rag.workflows.eval) for keyword search, semantic search, plain reciprocal rank
fusion (RRF over the top 50 of each, what hybrid search did before), hybrid search as it is now (RRF only when one of
the best keyword passages holds every query term, else the semantic ranking), and two static alternatives: RRF with the
semantic ranking weighted twice, and a min-max convex combination of the two scores at equal weights. `fused` counts
the questions for which hybrid search fuses (the rest get the semantic ranking). A cell is marked
`*` when it meets the better half (the best of keyword and semantic) in both figures. Results are diverse as by default
(`spread`), and, in a second table, the plain ranking. With --keep the knowledge bases are kept and reused (a whole
manual takes minutes to embed on 2 cores).
"""
from __future__ import annotations
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT/"bench"))
os.environ.setdefault("OPIK_TRACK_DISABLE", "true")
PG, PY = Path("/usr/share/doc/postgresql-doc-15/html"), Path("/usr/share/doc/python3-doc/html/library")
PY_MODULES = ("bisect heapq shelve secrets hmac hashlib uuid zlib gzip bz2 lzma tarfile zipfile tempfile shutil glob "
              "fnmatch filecmp fileinput difflib textwrap string struct codecs base64 binascii csv configparser tomllib "
              "json plistlib sqlite3 pickle copy pprint reprlib enum graphlib dataclasses contextlib abc atexit "
              "traceback warnings weakref gc timeit tracemalloc faulthandler sched queue threading concurrent.futures "
              "selectors signal mmap ipaddress statistics fractions decimal random calendar zoneinfo shlex getpass "
              "webbrowser urllib.parse http.cookies").split()
CORPORA = ("sample", "pg50", "py68", "pyall", "pgall")
K, DEPTH = 5, 50  # results kept; candidates of each half, as hybrid search takes them for k=5


def need(folder: Path, package: str) -> Path:
    "`folder`, installing the Debian `package` that holds it first when it is missing."
    if not folder.is_dir():
        if shutil.which("apt-get") and os.geteuid() == 0:
            subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", package], check=True,
                           env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        else: sys.exit(f"the corpus is not at {folder}: sudo apt-get install {package}")
    return folder


def golden(name: str) -> Path:
    from gaia_mas.rag.kb.ingest import sample_dir
    if name == "sample": return sample_dir()/"golden.jsonl"
    return ROOT/"bench"/"data"/("pg_golden.jsonl" if name.startswith("pg") else "python_golden.jsonl")


def pages(name: str) -> list[Path]:
    "The files of corpus `name`."
    from gaia_mas.rag.kb.ingest import sample_dir
    if name == "sample": return [sample_dir()/"docs"]  # the folder, as a user ingests it (sidecars are metadata)
    if name == "pg50":
        need(PG, "postgresql-doc-15")
        from rag_real_corpus import corpus
        return corpus()
    if name == "pgall": return sorted(need(PG, "postgresql-doc-15").glob("*.html"))
    if name == "pyall": return sorted(need(PY, "python3-doc").glob("*.html"))
    need(PY, "python3-doc")
    named = {r for line in golden("py68").read_text().splitlines() if line.strip() for r in json.loads(line)["relevant"]}
    return sorted({PY/n for n in named} | {PY/f"{m}.html" for m in PY_MODULES})


def build(name: str, folder: Path):
    "The knowledge base of corpus `name` in `folder`, built (text, then vectors) unless a complete one is there."
    from gaia_mas.rag.kb.embeddings import LocalEmbeddings
    from gaia_mas.rag.kb.ingest import backfill_vectors, ingest
    from gaia_mas.rag.kb.api import open_kb
    kb = open_kb(folder/f"{name}.sqlite", LocalEmbeddings())
    files = pages(name)
    if not kb.sources() or len(kb.sources()) < len(files) - 10 or kb.missing_count():
        rep = ingest(kb, files, embed=False)
        print(f"{name}: {len(rep.added)} pages, {rep.chunks} chunks; embedding", file=sys.stderr, flush=True)
        backfill_vectors(kb, progress=sys.stderr.isatty())
    return kb


def fuse(lists: list[list[tuple[int, float]]], weights: list[float], how: str) -> list[tuple[int, float]]:
    "The (id, score) lists fused: weighted RRF (k=60), or a convex combination of min-max scaled scores."
    score: dict[int, float] = {}
    for pairs, w in zip(lists, weights):
        if not pairs: continue
        hi, lo = pairs[0][1], pairs[-1][1]
        for r, (i, s) in enumerate(pairs, 1):
            score[i] = score.get(i, 0.0) + w * (1 / (60 + r) if how == "rrf" else (s - lo) / (hi - lo) if hi > lo else 1.0)
    return sorted(score.items(), key=lambda x: -x[1])


def fused(kb, question: str) -> bool:
    "Whether hybrid search fuses for `question` (one of the best keyword passages holds every query term)."
    from gaia_mas.rag.kb.api import LITERAL_DEPTH, query_terms
    terms = query_terms(question)
    return kb._any_holds_all([i for i, _ in kb.rank_keyword(terms, LITERAL_DEPTH, [])], terms)


def candidates(kb, question: str, diverse: bool) -> dict[str, list]:
    """Each candidate's top K hits for `question`: the three modes as they are, and three fusions of the engine's own
    top-50 keyword and semantic lists (those hybrid search fuses; reaching them needs the engine's primitives)."""
    from gaia_mas.rag.kb.api import query_terms
    terms, vec = query_terms(question), kb._query_vector(question)
    words, meaning = kb.rank_keyword(terms, DEPTH, []), kb.rank_vector(vec, DEPTH, [])
    fused = {"RRF (before)": fuse([words, meaning], [1, 1], "rrf"), "RRF, semantic x2": fuse([words, meaning], [1, 2], "rrf"),
             "min-max 0.5": fuse([words, meaning], [0.5, 0.5], "minmax")}
    out = {m: list(kb.search(question, mode=m, k=K, diverse=diverse)) for m in ("keyword", "semantic", "hybrid")}
    return {**out, **{n: kb._distinct(kb._spread(s, K) if diverse else s, K) for n, s in fused.items()}}


CANDIDATES = ("keyword", "semantic", "RRF (before)", "hybrid", "RRF, semantic x2", "min-max 0.5")


def measure(name: str, folder: Path) -> dict:
    "{ranking: {half: {candidate: {recall@5, mrr}}}} of corpus `name`, with diverse results and the plain ranking."
    from gaia_mas.rag.workflows.eval import match_sources, ranked_sources, read_golden, score_run
    kb = build(name, folder)
    questions, problems = read_golden(golden(name))
    questions, left, notes = match_sources(questions, kb.sources())
    if problems or left: sys.exit(f"{name}: the golden set does not fit the knowledge base: {problems + notes}")
    lines, halves = golden(name).read_text().splitlines(), {}
    for q in questions: halves.setdefault(json.loads(lines[q.line - 1]).get("half", "all"), []).append(q)
    out = {}
    for how, diverse in (("diverse", True), ("plain ranking", False)):
        runs = {c: {} for c in CANDIDATES}
        for q in questions:
            for c, hits in candidates(kb, q.question, diverse).items(): runs[c][q.id] = ranked_sources(hits)
        out[how] = {h: {c: _means(score_run(qs, runs[c], K)) for c in CANDIDATES} for h, qs in halves.items()}
    out["fused"] = {h: f"{sum(fused(kb, q.question) for q in qs)}/{len(qs)}" for h, qs in halves.items()}
    kb.close()
    return out


def _means(per: dict) -> dict:
    return {"recall@5": round(statistics.mean(s["recall"] for s in per.values()), 3),
            "mrr": round(statistics.mean(s["mrr"] for s in per.values()), 3)}


def table(results: dict, how: str) -> str:
    "A markdown table, corpus x half by candidate, `*` where a candidate meets the better half in both figures."
    lines = ["| corpus | half | fused | " + " | ".join(CANDIDATES) + " |", "|---|---|---|" + "---|" * len(CANDIDATES)]
    meets = dict.fromkeys(CANDIDATES, 0); cells = 0
    for corpus, r in results.items():
        for half, c in r[how].items():
            best = {x: max(c["keyword"][x], c["semantic"][x]) for x in ("recall@5", "mrr")}
            ok = {n: all(c[n][x] >= best[x] - 1e-9 for x in best) for n in CANDIDATES}
            meets = {n: meets[n] + ok[n] for n in CANDIDATES}; cells += 1
            lines.append(f"| {corpus} | {half} | {r['fused'][half]} | " + " | ".join(f"{c[n]['recall@5']:.3f} / {c[n]['mrr']:.3f}"
                                                           f"{' *' if ok[n] else ''}" for n in CANDIDATES) + " |")
    lines.append(f"| meets the better half | of {cells} | | " + " | ".join(str(meets[n]) for n in CANDIDATES) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--keep", type=Path, help="keep the knowledge bases in this folder, and reuse them")
    ap.add_argument("--corpora", default=",".join(CORPORA), help=f"some of {','.join(CORPORA)}")
    ap.add_argument("--out", type=Path, help="write the figures as JSON here")
    a = ap.parse_args(argv)
    names = [n for n in a.corpora.split(",") if n]
    if bad := set(names) - set(CORPORA): sys.exit(f"unknown corpora {sorted(bad)}: give some of {','.join(CORPORA)}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = a.keep or Path(tmp); folder.mkdir(parents=True, exist_ok=True)
        results = {}
        for n in names: results[n] = measure(n, folder); print(n, json.dumps(results[n]), file=sys.stderr, flush=True)
    for how in ("diverse", "plain ranking"):
        print(f"\nRecall@5 / MRR over pages, {how} (top {K}; fusions over the top {DEPTH} of each half):\n")
        print(table(results, how))
    if a.out: a.out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
