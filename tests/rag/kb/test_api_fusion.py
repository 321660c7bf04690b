"""Hybrid search with the built-in MiniLM embedder on both engines: it fuses the two rankings for a question in the
documents' words, leans on the semantic ranking for a reworded one, and is never worse than the better of its halves on
the sample collection's golden set."""
import contextlib, os
import pytest

from gaia_mas.core.pg_server import fresh_database
from gaia_mas.rag.kb.embeddings import LocalEmbeddings
from gaia_mas.rag.workflows.eval import evaluate
from gaia_mas.rag.kb.ingest import ingest, sample_dir
from gaia_mas.rag.kb.api import open_kb

LITERAL = "circuit breaker half-open state"
REWORDED = "how do I avoid charging a customer twice when a request is repeated"


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def minilm_kb(request, tmp_path_factory):
    "The sample collection with MiniLM vectors, built once per engine: the tests only search it."
    with contextlib.ExitStack() as stack:
        if request.param == "sqlite": url = f"sqlite:///{tmp_path_factory.mktemp('fusion')/'kb.sqlite'}"
        else: url = stack.enter_context(fresh_database(request.getfixturevalue("pg_url"), f"kb_fusion_{os.getpid()}"))
        kb = stack.enter_context(open_kb(url, LocalEmbeddings()))
        rep = ingest(kb, [sample_dir()/"docs"])
        assert rep.added and not rep.failed, rep
        yield kb


def test_hybrid_fuses_literal_questions_and_leans_on_meaning_for_reworded_ones(minilm_kb):
    ids = lambda q, mode, diverse=True: [h.chunk_id for h in minilm_kb.search(q, mode=mode, k=5, diverse=diverse)]
    for diverse in (True, False):
        assert ids(LITERAL, "hybrid", diverse) != ids(LITERAL, "semantic", diverse)
        assert ids(REWORDED, "hybrid", diverse)[0] == ids(REWORDED, "semantic", diverse)[0]
    assert ids(REWORDED, "hybrid") != ids(REWORDED, "keyword")


def test_hybrid_meets_the_better_half_on_the_golden_set(minilm_kb):
    for diverse in (True, False):
        modes = evaluate(minilm_kb, sample_dir()/"golden.jsonl", diverse=diverse)["modes"]
        for figure in ("recall", "mrr"):
            best = max(modes["keyword"][figure], modes["semantic"][figure])
            assert modes["hybrid"][figure] >= best, (diverse, figure, modes)
