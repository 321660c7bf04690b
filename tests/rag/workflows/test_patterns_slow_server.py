"""The RAG workflows against a model server that is too slow: every reply takes longer than the limits. Each pattern
still ends within its limit (plus a little for the last step to stop), with an answer, and the metadata names what
was cut short. The server is the project's loopback fake, so this runs anywhere in seconds."""
import time
import pytest
from gaia_mas.core.testing import FakeOpenAIServer
from gaia_mas.rag.kb.ingest import sample_kb
from gaia_mas.rag.workflows.state import Limits
from gaia_mas.rag.workflows.system import make_rag_system

LIMITS = Limits(sequential=1.5, parallel=2, supervisor=2.5, branch=1, llm_call=1)


@pytest.mark.parametrize("pattern", ["sequential", "parallel", "supervisor"])
def test_limits_hold_against_a_slow_server(pattern, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer(responder=lambda req: {"hang": 30}) as srv:
        system = make_rag_system(provider="openai", model="slow", base_url=srv.base_url, max_retries=0, llm_timeout=30,
                                 knowledge_base=sample_kb(), limits=LIMITS)
        t0 = time.monotonic(); r = system.ask("What is a circuit breaker?", f"slow-{pattern}", pattern); dt = time.monotonic() - t0
    assert dt <= LIMITS.total(pattern) + 3, dt
    assert isinstance(r["answer"], str) and r["answer"].strip()
    assert r["metadata"].get("cut_short"), r["metadata"]
    asked = [q.get("max_tokens") or q.get("max_completion_tokens") for q in srv.requests]
    assert asked and all(isinstance(m, int) and m > 0 for m in asked), asked  # every agent has max_tokens
    assert any((q.get("response_format") or {}).get("type") == "json_schema" for q in srv.requests)  # JSON through the format
