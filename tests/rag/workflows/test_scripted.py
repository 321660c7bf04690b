"""The scripted model's dry runs read as answers: taken from the passages they cite, without stray code, without the
supervisor's worker labels, each finding once."""
import re
import pytest
from gaia_mas.rag.workflows.system import scripted_system


@pytest.fixture(scope="module")
def rag(): return scripted_system()


@pytest.mark.parametrize("pattern", ["sequential", "parallel"])
def test_what_is_idempotency_is_answered_from_the_idempotency_document(rag, pattern):
    r = rag.ask("What is idempotency?", f"idem-{pattern}", pattern)
    assert "do not answer" not in r["answer"] and "does not answer" not in r["answer"], r["answer"]
    assert any(c.startswith("idempotency.md") for c in re.findall(r"\[([^\]]+)\]", r["answer"])), r["answer"]


@pytest.mark.parametrize("q", ["What is a bulkhead?", "What is idempotency?", "How do retries with backoff work?"])
def test_sentences_carry_their_citation_and_no_code(rag, q):
    "Every line of a dry-run answer built from sentences ends with a citation; no fence or bit of code is left alone."
    r = rag.ask(q, "prose-" + "-".join(q.lower().strip("?").split()), "sequential")
    for line in filter(str.strip, r["answer"].split("\n")):
        assert "```" not in line and line.rstrip().endswith("]"), r["answer"]


def test_supervisor_answer_has_no_worker_labels_and_says_each_finding_once(rag):
    r = rag.ask("How do I implement a circuit breaker in Python?", "sup", "supervisor")
    answer = r["answer"]
    assert not re.search(r"(?m)^\s*\w*Worker\b", answer) and "Worker" not in answer, answer
    sentences = [s for s in re.split(r"(?<=\])\s+", re.sub(r"```.*?```", "", answer, flags=re.S)) if s.strip()]
    assert len(sentences) == len(set(sentences)), answer
    assert answer.count("def stock_level(sku):\n    try:") == 1, answer
