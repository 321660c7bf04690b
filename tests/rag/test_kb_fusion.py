"""Hybrid search with the built-in MiniLM embedder on both engines: it fuses the two rankings for a question in the
documents' words, keeps the semantic ranking for a reworded one, and is never worse than the better of its halves on
the sample collection's golden set."""
import pytest

from gaia_mas.rag.embeddings import LocalEmbeddings
from gaia_mas.rag.eval import evaluate
from gaia_mas.rag.ingest import ingest, sample_dir
from gaia_mas.rag.kb import open_kb

LITERAL = "circuit breaker half-open state"
REWORDED = "how do I avoid charging a customer twice when a request is repeated"


@pytest.fixture
def minilm_kb(kb_url):
    with open_kb(kb_url, LocalEmbeddings()) as kb:
        rep = ingest(kb, [sample_dir()/"docs"])
        assert rep.added and not rep.failed, rep
        yield kb


def test_hybrid_fuses_literal_questions_and_trusts_meaning_for_reworded_ones(minilm_kb):
    ids = lambda q, mode, diverse=True: [h.chunk_id for h in minilm_kb.search(q, mode=mode, k=5, diverse=diverse)]
    for diverse in (True, False):
        assert ids(LITERAL, "hybrid", diverse) != ids(LITERAL, "semantic", diverse)
        assert ids(REWORDED, "hybrid", diverse) == ids(REWORDED, "semantic", diverse)
    assert ids(REWORDED, "hybrid") != ids(REWORDED, "keyword")


def test_hybrid_meets_the_better_half_on_the_golden_set(minilm_kb):
    for diverse in (True, False):
        modes = evaluate(minilm_kb, sample_dir()/"golden.jsonl", diverse=diverse)["modes"]
        for figure in ("recall", "mrr"):
            best = max(modes["keyword"][figure], modes["semantic"][figure])
            assert modes["hybrid"][figure] >= best, (diverse, figure, modes)
