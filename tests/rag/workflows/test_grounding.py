"""The RAG workflows against a model server that fills every JSON field with "..." (as a small base model does when it
copies its prompt's example): each pattern still gives an answer that says something, held to the passages and
labelled, and keeps the user's question. With passages of code and prose, a prose question is not offered the code,
and a list or a slice in the code (`[1:3]`) is never taken for a citation.
The server is the project's loopback fake, so this runs anywhere in seconds."""
import json
import pytest
from langchain_core.tools import StructuredTool
from gaia_mas.core.testing import FakeOpenAIServer
from gaia_mas.rag.kb.ingest import sample_kb
from gaia_mas.rag.workflows.system import make_rag_system

Q = "When does a circuit breaker open?"
CODE = ["4000, 10, 700, 22222", "1:3", ">>> squares = [x**2 for x in range(10)]\n>>> squares[1:3]"]
PROSE = "A circuit breaker opens after five failures in a row, and stops calls to the failing service."


def placeholder(req:dict) -> dict:
    "A reply whose every field is '...' (numbers 0.5, lists empty), whatever the schema asks."
    schema = ((req.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
    kinds = {"number": 0.5, "array": []}
    return {"content": json.dumps({k: kinds.get(v.get("type"), "...") for k, v in schema.get("properties", {}).items()}
                                  or {"final_answer": "..."})}


def said(answer:str) -> str:
    "The answer without its `Sources:` line."
    return answer.split("\n\nSources:")[0].strip()


@pytest.mark.parametrize("small", [True, False])
@pytest.mark.parametrize("pattern", ["sequential", "parallel", "supervisor"])
def test_placeholder_replies_still_answer(pattern, small, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer(responder=placeholder) as srv:
        system = make_rag_system(provider="openai", model="gemma-3-270m", base_url=srv.base_url, max_retries=0,
                                 small_model=small, knowledge_base=sample_kb())
        r = system.ask(Q, f"dots-{pattern}-{small}", pattern)
    text = said(r["answer"])
    assert text.strip(" .…") and "..." not in text.splitlines()[0], r["answer"]
    assert text.startswith("From the sources:") and r["metadata"].get("extractive"), r
    assert any("circuit-breaker" in c for c in r["citations"]), r["citations"]
    assert r["metadata"].get("standalone_question") in (None, Q), r["metadata"]
    assert system.limits.small_model is small


def _hits(query:str, k:int=5) -> str:
    "Search results of a programming tutorial: code fragments first, then one prose passage."
    blocks = [f"[{i}] tutorial.html#code{i} (score 0.9)\n{t}" for i, t in enumerate(CODE, 1)]
    return "\n\n".join([*blocks, f"[4] tutorial.html#breakers (score 0.5)\n{PROSE}"])


def test_code_is_not_offered_for_a_prose_question(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    tools = [StructuredTool.from_function(_hits, name=n, description="search")
             for n in ("retrieve_tool", "hybrid_search_tool", "keyword_search_tool")]
    with FakeOpenAIServer(responder=placeholder) as srv:
        system = make_rag_system(provider="openai", model="gemma-3-270m", base_url=srv.base_url, max_retries=0,
                                 tools=tools)
        prose = system.ask(Q, "code-prose", "sequential")
        code = system.ask("Show example code that slices a list", "code-code", "sequential")
    assert prose["citations"] == ["tutorial.html#breakers"], prose["citations"]
    assert "five failures" in prose["answer"]
    assert (prose["metadata"]["research_context_count"], code["metadata"]["research_context_count"]) == (1, 4)
    assert all(c.startswith("tutorial.html#") for c in code["citations"]), code["citations"]  # no `[1:3]` from code
