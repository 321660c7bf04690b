"""Reworded questions against literal ones: retrieval per corpus x half x mode x configuration, held-out halves marked.

    python bench/rag_reworded.py [--corpora sample,pg50,py68,git] [--configs before,clean,merge,shipped]
                                 [--keep bench/out/reworded] [--out bench/data/rag_reworded.json]

Corpora and golden sets (built-in all-MiniLM-L6-v2 embedder; the Debian packages are installed when missing, as root):

- sample: the sample collection (nbs/samples/kb), 48 questions;
- pg50: 50 pages of PostgreSQL 15's manual (bench/rag_real_corpus.py) with bench/data/pg_golden.jsonl, 30 + 30;
- py68: 68 module pages of Python's library reference (bench/rag_fusion.py) with bench/data/python_golden.jsonl, 40 + 40;
- git: 84 pages of git's manual (Debian's git-doc) with bench/data/git_golden.jsonl, 20 literal + 20 reworded, written
  before anything was tuned; questions 01-10 of each half are the tuning half, 11-20 the held-out half (never tuned on);
- sqlite: 86 pages of SQLite's manual (Debian's sqlite3-doc) with bench/data/sqlite_golden.jsonl, 20 + 20 written from
  the pages' titles before any search ran over them, all held out.

Configurations change how pages are read and cut (each builds its own knowledge base):

- before: the reader and chunker without the page-boilerplate filter and without joining short sections;
- clean: navigation, tables of contents and Previous/Next blocks dropped (`drop_boilerplate`), short sections kept;
- merge: short sections (under `SHORT_SECTION`, 80 characters) joined to the next one (`join_short`), boilerplate kept;
- shipped: both, as `gaia-mas rag ingest` does by default (chunking `clean`);
- merge200, shipped200: the same with sections under 200 characters joined (a candidate measured and not kept).

For each knowledge base the modes keyword, semantic and hybrid (as the package has it: chunk fusion, and for a question not in
the documents' words pages fused with their chunks' mean similarity, `fuse_pages`), and candidates computed from the engine's own top-50 rankings:
`chunk fusion` (hybrid search before pages: RRF, semantic weighted 2 unless a top keyword passage holds every query
term), `pages: kw + sem` (for a reworded question, keyword's and semantic's pages fused without the pages' mean similarity), `sem pages: max +
0.1 sum` (semantic's top 200 chunks scored per page) and `PRF` (pseudo-relevance feedback: chunk fusion with a keyword
search for the 10 most telling words, tf x idf, of the top 3 semantic passages). Figures are page-level recall@5 / MRR
through gaia_mas.rag.workflows.eval, diverse results.
Ingest rate: chunks per CPU-second of the whole ingest (text and vectors), so that other jobs on the machine matter less.
"""
from __future__ import annotations
import argparse, contextlib, json, os, statistics, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT/"bench"))
from rag_fusion import need  # noqa: E402  (installs a corpus's Debian package when it is missing)
os.environ.setdefault("OPIK_TRACK_DISABLE", "true")
GIT = Path("/usr/share/doc/git-doc")
GIT_PAGES = ("add am apply archive bisect blame branch bundle checkout cherry cherry-pick clean clone commit describe diff "
             "difftool fetch filter-branch format-patch fsck gc grep hook init log ls-files maintenance merge merge-base "
             "mergetool mv notes prune pull push range-diff rebase reflog remote repack replace request-pull rerere reset "
             "restore revert rm send-email shortlog show show-branch sparse-checkout stash status submodule switch tag "
             "whatchanged worktree").split()
GIT_GUIDES = ("gitignore gitattributes gitrevisions githooks gitsubmodules gitfaq giteveryday gitworkflows gitglossary "
              "gittutorial gitcli gitcredentials gitmodules gitcore-tutorial gitdiffcore gitnamespaces gitmailmap "
              "gitrepository-layout gittutorial-2 gitremote-helpers gitprotocol-http gitformat-bundle gitk "
              "gitcvs-migration everyday").split()
SQLITE = Path("/usr/share/doc/sqlite3")
SQLITE_PAGES = ("lang_select windowfunctions lang_createtable lang_update lang_createtrigger lang_delete lang_altertable "
                "lang_expr lang_insert lang_with lang_upsert partialindex lang_createindex lang_returning lang_aggfunc "
                "lang_createview lang_attach lang_detach fts5 fts3 pragma cli atomiccommit rescode optoverview "
                "foreignkeys json1 howtocorrupt rtree geopoly datatype3 wal queryplanner faq tempfiles lang_corefunc "
                "lockingv3 spellfix1 lang_explain backup appfileformat appfunc quirks lang_transaction printf limits "
                "loadext whentouse lang_datefunc vfs zipfile withoutrowid floatingpoint lang_analyze eqp sqlar "
                "isolation rowvalue sharedcache nulls lang_savepoint uri lang_conflict lang_replace security "
                "lang_createvtab lang_indexedby lang_vacuum recovery stricttables dbstat gencol lang_mathfunc autoinc "
                "schematab sqldiff mmap inmemorydb threadsafe expridx lang_reindex lang_droptable series csv carray "
                "lang_naming").split()
REWORDED_WEIGHT = 2.0  # the semantic ranking's weight for a reworded question in the candidates' chunk fusion
CORPORA, CONFIGS = ("sample", "pg50", "py68", "git"), ("before", "clean", "merge", "shipped")
K, DEPTH = 5, 50


def golden(name: str) -> Path:
    if name not in ("git", "sqlite"): from rag_fusion import golden as g; return g(name)
    return ROOT/"bench"/"data"/f"{name}_golden.jsonl"


def pages(name: str) -> list[Path]:
    if name == "sqlite":
        need(SQLITE, "sqlite3-doc")
        return [SQLITE/f"{n}.html" for n in SQLITE_PAGES]
    if name != "git": from rag_fusion import pages as p; return p(name)
    need(GIT, "git-doc")
    return sorted([GIT/f"git-{n}.html" for n in GIT_PAGES] + [GIT/f"{n}.html" for n in GIT_GUIDES])


@contextlib.contextmanager
def configured(config: str):
    "The reader and chunker as `config` has them (module functions swapped for the run)."
    from gaia_mas.rag.kb import ingest as mod
    saved = {n: getattr(mod, n) for n in ("drop_boilerplate", "join_short", "SHORT_SECTION")}
    if config in ("before", "merge", "merge200"): mod.drop_boilerplate = lambda soup: soup
    if config in ("before", "clean"): mod.join_short = lambda secs: secs
    if config in ("merge200", "shipped200"): mod.SHORT_SECTION = 200
    try: yield
    finally:
        for n, f in saved.items(): setattr(mod, n, f)


def build(name: str, config: str, folder: Path) -> tuple:
    "The knowledge base of corpus `name` read as `config` has it, and its ingest figures (None when reused)."
    from gaia_mas.rag.kb.embeddings import LocalEmbeddings
    from gaia_mas.rag.kb.ingest import ingest
    from gaia_mas.rag.kb import open_kb
    path = folder/f"{name}-{config}.sqlite"
    if path.exists() and (kb := open_kb(path, LocalEmbeddings())).sources() and not kb.missing_count(): return kb, None
    path.unlink(missing_ok=True)
    kb, c0, t0 = open_kb(path, LocalEmbeddings()), time.process_time(), time.perf_counter()
    with configured(config): rep = ingest(kb, pages(name), budget=None)
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    return kb, {"chunks": rep.chunks, "cpu_s": round(cpu, 1), "wall_s": round(wall, 1),
                "chunks_per_cpu_s": round(rep.chunks / cpu, 1), "load": round(os.getloadavg()[0], 1)}


def weighted_rrf(lists: list[list[int]], weights: list[float]) -> list[tuple[int, float]]:
    score: dict[int, float] = {}
    for ids, w in zip(lists, weights):
        for r, i in enumerate(ids, 1): score[i] = score.get(i, 0.0) + w / (60 + r)
    return sorted(score.items(), key=lambda x: -x[1])


def candidates(kb, question: str) -> dict[str, list]:
    "Each mode's and each fusion candidate's top K hits (diverse, as searches are by default)."
    from gaia_mas.rag.kb.search import page_order, query_terms
    terms, vec = query_terms(question), kb._query_vector(question)
    words, meaning = kb.rank_keyword(terms, DEPTH, []), kb.rank_vector(vec, DEPTH, [])
    w, m, lit = [i for i, _ in words], [i for i, _ in meaning], kb._literal(terms, words)
    chunks = weighted_rrf([w, m], [1, 1 if lit else REWORDED_WEIGHT])
    src = kb._sources(list(dict.fromkeys(w + m)))
    pages = [page_order(words, src), page_order(meaning, src)]
    fused = {"chunk fusion": chunks, "pages: kw + sem": chunks if lit else _lead(chunks, weighted_rrf(pages, [1, REWORDED_WEIGHT]), src),
             "sem pages: max + 0.1 sum": _page_sum(kb, vec, src), "PRF": _prf(kb, terms, w, m, lit)}
    out = {md: list(kb.search(question, mode=md, k=K)) for md in ("keyword", "semantic", "hybrid")}
    return {**out, **{n: kb._distinct(kb._spread(s[:DEPTH], K), K) for n, s in fused.items()}}


RUNS = ("keyword", "semantic", "hybrid", "chunk fusion", "pages: kw + sem", "sem pages: max + 0.1 sum", "PRF")


def _lead(chunks: list, pages: list, src: dict) -> list:
    "Each page's best chunk, pages in the order of `pages`; then the rest (as `fuse_pages` does)."
    from gaia_mas.rag.kb.search import fuse_pages
    return fuse_pages(chunks, [[p for p, _ in pages]], [1.0], src)


def _page_sum(kb, vec, src: dict) -> list:
    "Semantic search's top 200 chunks scored per page: the best chunk's similarity plus 0.1 of the others'."
    ranked = kb.rank_vector(vec, 200, []); src = {**src, **kb._sources([i for i, _ in ranked])}
    score, best = {}, {}
    for i, s in ranked:
        p = src[i]; score[p] = score.get(p, 0.0) + (s if p not in best else 0.1 * s); best.setdefault(p, i)
    return [(best[p], s) for p, s in sorted(score.items(), key=lambda x: -x[1])]


def _prf(kb, terms: list, w: list, m: list, lit: bool, depth: int = 3, extra: int = 10) -> list:
    "Chunk fusion with a third ranking: keyword search for the `extra` terms of the top semantic passages (tf x idf)."
    import collections, math
    from gaia_mas.rag.kb.search import STOP_WORDS, WORD
    total, tf = kb.db.execute("select count(*) from chunks").fetchone()[0], collections.Counter()
    for r in kb.rows(m[:depth]).values():
        words = [x for x in WORD.findall(r["text"].lower()) if x not in STOP_WORDS and len(x) > 2 and not x.isdigit()]
        for x, c in collections.Counter(words).items(): tf[x] += c / len(words)
    df = lambda x: kb.db.execute("select count(*) from chunks_fts where chunks_fts match ?", (f'"{x}"',)).fetchone()[0]
    new = sorted((x for x, _ in tf.most_common(60) if x not in terms), key=lambda x: -tf[x] * math.log(total / (1 + df(x))))
    more = [i for i, _ in kb.rank_keyword(new[:extra], DEPTH, [])]
    return weighted_rrf([w, m, more], [1, 1 if lit else 2, 1])


def halves(name: str, questions) -> dict[str, list]:
    "{half (with its split): questions}; the held-out split of git marked."
    lines, out = golden(name).read_text().splitlines(), {}
    for q in questions:
        g = json.loads(lines[q.line - 1])
        out.setdefault(g.get("half", "all") + (f" {g['split']}" if "split" in g else ""), []).append(q)
    return out


def measure(name: str, config: str, folder: Path) -> dict:
    from gaia_mas.rag.workflows.eval import match_sources, ranked_sources, read_golden, score_run
    kb, ingested = build(name, config, folder)
    questions, problems = read_golden(golden(name))
    questions, left, notes = match_sources(questions, kb.sources())
    if problems or left: sys.exit(f"{name}: the golden set does not fit the knowledge base: {problems + notes}")
    runs = {c: {} for c in RUNS}
    for q in questions:
        for c, hits in candidates(kb, q.question).items(): runs[c][q.id] = ranked_sources(hits)
    out = {"ingest": ingested, "chunks": kb.stats().get("chunks"), "halves": {}}
    for h, qs in halves(name, questions).items():
        out["halves"][h] = {c: _means(score_run(qs, runs[c], K)) for c in RUNS}
    kb.close()
    return out


def _means(per: dict) -> dict:
    return {"recall@5": round(statistics.mean(s["recall"] for s in per.values()), 3),
            "mrr": round(statistics.mean(s["mrr"] for s in per.values()), 3)}


def table(results: dict) -> str:
    "Markdown: corpus x half x configuration by run; `*` where a run meets the better of keyword and semantic."
    lines = ["| corpus | half | config | " + " | ".join(RUNS) + " |", "|---|---|---|" + "---|" * len(RUNS)]
    for (corpus, config), r in results.items():
        for half, c in r["halves"].items():
            best = {x: max(c["keyword"][x], c["semantic"][x]) for x in ("recall@5", "mrr")}
            ok = lambda n: all(c[n][x] >= best[x] - 1e-9 for x in best)
            mark = " (held out)" if "held-out" in half else ""
            lines.append(f"| {corpus} | {half}{mark} | {config} | " + " | ".join(
                f"{c[n]['recall@5']:.3f} / {c[n]['mrr']:.3f}{' *' if ok(n) else ''}" for n in RUNS) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default=",".join(CORPORA)); ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--keep", type=Path, default=ROOT/"bench"/"out"/"reworded", help="knowledge bases kept here")
    ap.add_argument("--out", type=Path, help="write the figures as JSON here")
    a = ap.parse_args(argv)
    a.keep.mkdir(parents=True, exist_ok=True)
    results = {}
    for n in a.corpora.split(","):
        for c in a.configs.split(","):
            results[(n, c)] = r = measure(n, c, a.keep)
            print(n, c, json.dumps(r), file=sys.stderr, flush=True)
    print(f"\nRecall@5 / MRR over pages (top {K}, diverse; fusion candidates over the top {DEPTH} of each half):\n")
    print(table(results))
    print("\nIngest (text and vectors, in this process): chunks, CPU s, chunks per CPU-second, load average")
    for (n, c), r in results.items():
        if i := r["ingest"]: print(f"  {n:7} {c:8} {i['chunks']:6} {i['cpu_s']:7} {i['chunks_per_cpu_s']:6} {i['load']}")
    if a.out: a.out.write_text(json.dumps({f"{n}/{c}": r for (n, c), r in results.items()}, indent=1))


if __name__ == "__main__":
    main()
