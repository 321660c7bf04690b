"""Keyword search beside plain BM25 (bm25s) over the same chunks, then each search mode, per golden set, half and split.

    python bench/rag_keyword.py [--corpora sample,pg50,py68,git,sqlite] [--keep bench/out/reworded] [--out FILE]

The knowledge bases are those of bench/rag_reworded.py (the shipped reading and chunking, the built-in MiniLM
embedder), built once and kept in --keep. Every golden set but the sample's and SQLite's is split: questions 01 to
half the set's size of each half are the tuning split, the rest are held out (the `split` field of
bench/data/*_golden.jsonl); SQLite's questions are all held out.

Runs, each the top 5 passages of one question, scored by page (recall@5 / MRR through gaia_mas.rag.workflows.eval):

- keyword, semantic, hybrid: `kb.search` in that mode, as the package has it (diverse results);
- bm25s: bm25s (its defaults: Lucene's BM25, k1 1.5, b 0.75, English stop words) over the knowledge base's chunks,
  each chunk's text alone, the plain ranking of its top 5;
- bm25s+stem: the same with PyStemmer's English stemmer (`pip install pystemmer`), the setup bm25s's README shows;
  left out when PyStemmer is missing;
- tutorial: the pipeline a LangChain tutorial builds: each document's text (its chunks joined in order) cut again by
  `RecursiveCharacterTextSplitter` into 1000-character pieces overlapping by 200, ranked by plain bm25s.

A half with two splits is also scored on all its questions (`pooled`).

A cell of keyword is marked `*` when it meets the best bm25s run in both figures; a cell of hybrid when it meets the
better of keyword and semantic search in both.
"""
from __future__ import annotations
import argparse, json, os, statistics, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT/"bench"))
os.environ.setdefault("OPIK_TRACK_DISABLE", "true")
CORPORA, K, MODES = ("sample", "pg50", "py68", "git", "sqlite"), 5, ("keyword", "semantic", "hybrid")


def chunks(kb) -> tuple[list[int], list[str], dict[int, str]]:
    "Every chunk's id and text, and its source (`KnowledgeBase.passages`)."
    rows = list(kb.passages())
    return [i for i, _, _ in rows], [t for _, t, _ in rows], {i: s for i, _, s in rows}


class BM25s:
    "bm25s over the chunks' texts, with or without PyStemmer's English stemmer."
    def __init__(self, ids: list[int], texts: list[str], stem: bool):
        import bm25s
        self.stemmer = None
        if stem:
            import Stemmer
            self.stemmer = Stemmer.Stemmer("english")
        self.ids, self.bm25s = ids, bm25s
        self.index = bm25s.BM25()
        self.index.index(bm25s.tokenize(texts, stopwords="en", stemmer=self.stemmer, show_progress=False),
                         show_progress=False)

    def top(self, question: str, k: int = K) -> list[int]:
        toks = self.bm25s.tokenize([question], stopwords="en", stemmer=self.stemmer, show_progress=False)
        if not toks.vocab: return []
        docs, scores = self.index.retrieve(toks, k=k, show_progress=False)
        return [self.ids[j] for j, s in zip(docs[0], scores[0]) if s > 0]


def tutorial(ids: list[int], texts: list[str], source: dict[int, str]):
    "A function from a question to the sources of bm25s's top 5 over 1000/200-character pieces of each document."
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    split, docs = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200), {}
    for i, t in zip(ids, texts): docs.setdefault(source[i], []).append(t)
    pieces = [(s, p) for s, ts in docs.items() for p in split.split_text("\n\n".join(ts))]
    b = BM25s(list(range(len(pieces))), [p for _, p in pieces], stem=False)
    return lambda q: list(dict.fromkeys(pieces[j][0] for j in b.top(q)))


def rankers(kb) -> dict[str, object]:
    "{run name: a function from a question to its ranked sources}."
    from gaia_mas.rag.workflows.eval import ranked_sources
    ids, texts, source = chunks(kb)
    out = {m: (lambda q, m=m: ranked_sources(kb.search(q, mode=m, k=K))) for m in MODES}
    stems = [False]
    try: import Stemmer; stems.append(True)  # noqa: F401
    except ImportError: print("PyStemmer is missing: bm25s+stem left out (pip install pystemmer)", file=sys.stderr)
    for stem in stems:
        b = BM25s(ids, texts, stem)
        out["bm25s+stem" if stem else "bm25s"] = lambda q, b=b: list(dict.fromkeys(source[i] for i in b.top(q)))
    out["tutorial"] = tutorial(ids, texts, source)
    return out


def golden(name: str) -> Path:
    from rag_reworded import golden as g
    return g(name)


def splits(name: str, questions) -> dict[str, list]:
    "{'literal pooled', 'literal tune', 'reworded held-out', ...: questions}; the sample's are one set, 'all'."
    lines, halves, out = golden(name).read_text().splitlines(), {}, {}
    for q in questions:
        g = json.loads(lines[q.line - 1])
        halves.setdefault(g.get("half", "all"), {}).setdefault(g.get("split", "pooled"), []).append(q)
    for half, parts in halves.items():  # a half held out whole is shown once, as held-out
        if len(parts) > 1: out[f"{half} pooled"] = [q for qs in parts.values() for q in qs]
        out.update({f"{half} {s}": qs for s, qs in parts.items()})
    return out


def measure(name: str, folder: Path) -> dict:
    from rag_reworded import build
    from gaia_mas.rag.workflows.eval import match_sources, read_golden, score_run
    kb, ingested = build(name, "shipped", folder)
    questions, problems = read_golden(golden(name))
    questions, left, notes = match_sources(questions, kb.sources())
    if problems or left: sys.exit(f"{name}: the golden set does not fit the knowledge base: {problems + notes}")
    runs, cpu = {}, {}
    for run, rank in rankers(kb).items():
        c0 = time.process_time()
        runs[run] = {q.id: rank(q.question) for q in questions}
        cpu[run] = round(1000 * (time.process_time() - c0) / len(questions), 1)
    out = {"chunks": kb.stats()["chunks"], "ingest": ingested, "cpu_ms_per_question": cpu, "splits": {}}
    for s, qs in splits(name, questions).items():
        out["splits"][s] = {"questions": len(qs), **{r: _means(score_run(qs, runs[r], K)) for r in runs}}
    kb.close()
    return out


def _means(per: dict) -> dict:
    return {"recall@5": round(statistics.mean(s["recall"] for s in per.values()), 3),
            "mrr": round(statistics.mean(s["mrr"] for s in per.values()), 3)}


def _meets(c: dict, run: str, others: list[str]) -> bool:
    others = [o for o in others if o in c]
    return bool(others) and all(c[run][x] >= max(c[o][x] for o in others) - 1e-9 for x in ("recall@5", "mrr"))


def table(results: dict) -> str:
    "Markdown: corpus x split by run; `*` as the module's docstring says."
    runs = [r for r in ("keyword", "bm25s", "bm25s+stem", "tutorial", "semantic", "hybrid")
            if any(r in c for res in results.values() for c in res["splits"].values())]
    lines = ["| corpus | split | n | " + " | ".join(runs) + " |", "|---|---|---|" + "---|" * len(runs)]
    for corpus, res in results.items():
        for s, c in res["splits"].items():
            mark = {"keyword": _meets(c, "keyword", ["bm25s", "bm25s+stem", "tutorial"]),
                    "hybrid": _meets(c, "hybrid", ["keyword", "semantic"])}
            cells = [f"{c[r]['recall@5']:.3f} / {c[r]['mrr']:.3f}{' *' if mark.get(r) else ''}" for r in runs]
            lines.append(f"| {corpus} | {'**' + s + '**' if 'held-out' in s else s} | {c['questions']} | "
                         + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default=",".join(CORPORA))
    ap.add_argument("--keep", type=Path, default=ROOT/"bench"/"out"/"reworded", help="knowledge bases kept here")
    ap.add_argument("--out", type=Path, help="write the figures as JSON here")
    a = ap.parse_args(argv)
    a.keep.mkdir(parents=True, exist_ok=True)
    results = {}
    for n in a.corpora.split(","):
        results[n] = r = measure(n, a.keep)
        print(n, json.dumps(r), file=sys.stderr, flush=True)
    print(f"\nRecall@5 / MRR by page (top {K}); held-out splits in bold:\n")
    print(table(results))
    print("\nSearch CPU ms per question:", {n: r["cpu_ms_per_question"] for n, r in results.items()})
    for n, r in results.items():
        if i := r["ingest"]: print(f"ingest {n}: {i['chunks']} chunks, {i['cpu_s']} CPU s, "
                                   f"{i['chunks_per_cpu_s']} chunks per CPU-second, load {i['load']}")
    if a.out: a.out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
