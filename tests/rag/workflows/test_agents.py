"""The RAG agents one by one, on the sample collection's tools: their output fields, tool fallbacks, summarizing,
citation checks, the repair path, and the checks on what the model returns."""
import asyncio, json
import pytest
from langchain_core.tools import StructuredTool
from gaia_mas.core.scripted import ScriptedChatModel
from gaia_mas.rag.workflows.agents import (analysis_agent, evaluator_agent, research_agent, supervisor_agent, synthesis_agent, worker_agent,
                                 DEFAULT_WORKERS, as_context, passages)
from gaia_mas.rag.workflows.scripted import scripted_rag_llm

Q = "What is a circuit breaker?"
PLAN = {"standalone_question": Q, "search_query": "circuit breaker", "keywords": ["half-open"], "metadata_filter": "", "strategy": "both"}


@pytest.fixture(scope="module")
def tools():
    from gaia_mas.rag.kb.ingest import sample_kb
    from gaia_mas.rag.kb.tools import make_rag_tools
    return {t.name: t for t in make_rag_tools(sample_kb(), llm=scripted_rag_llm())}


def run(coro): return asyncio.run(coro)


def broken(name):
    def fail(query: str, k: int = 5) -> str: raise RuntimeError("index offline")
    return StructuredTool.from_function(fail, name=name, description="broken")


def test_research_output_fields_and_dedupe(tools):
    out = run(research_agent(ScriptedChatModel(responder=PLAN), list(tools.values()))({"question": Q, "context": [], "session_id": "s"}))
    assert {"research_context", "search_strategy", "doc_count", "metadata"} <= set(out)
    assert {"tools_used", "retrieval_time"} <= set(out["metadata"]) and out["metadata"]["tools_used"] == ["retrieve_tool", "keyword_search_tool"]
    assert out["doc_count"] == len(out["research_context"]) == len(set(out["research_context"])) > 0
    assert all(c.startswith("[") for c in out["research_context"]) and "half-open" in " ".join(out["research_context"]).lower()


def test_research_tool_fails_alternative_used(tools):
    ts = [broken("retrieve_tool"), tools["hybrid_search_tool"]]
    out = run(research_agent(ScriptedChatModel(responder={**PLAN, "keywords": []}), ts)({"question": Q}))
    assert out["metadata"]["tools_used"] == ["hybrid_search_tool"] and out["doc_count"] > 0
    assert "retrieve_tool: RuntimeError" in out["metadata"]["errors"][0]


def test_research_metadata_filter(tools):
    plan = {**PLAN, "keywords": [], "metadata_filter": "source=circuit-breakers.md"}
    out = run(research_agent(ScriptedChatModel(responder=plan), list(tools.values()))({"question": Q}))
    assert "metadata_search_tool" in out["metadata"]["tools_used"]


def test_research_nothing_found_warns():
    empty = StructuredTool.from_function(lambda query, k=5: "[]", name="retrieve_tool", description="empty")
    out = run(research_agent(ScriptedChatModel(responder=PLAN), [empty])({"question": Q}))
    assert out["research_context"] == [] and "error" not in out and any("no documents" in w for w in out["metadata"]["warnings"])


def test_repair_path_fixes_a_malformed_plan(tools):
    llm = ScriptedChatModel(script=["Sure! The plan is to search.", json.dumps(PLAN)])
    out = run(research_agent(llm, [tools["retrieve_tool"]])({"question": Q}))
    assert len(llm.calls) == 2 and out["search_strategy"].startswith("both") and not out["metadata"]["warnings"]


def test_analysis_summarizes_long_context(tools):
    ctx = as_context(passages(tools["hybrid_search_tool"].invoke({"query": "circuit breaker", "k": 20}))) * 3
    assert len("\n".join(ctx)) > 5000
    reply = {"analyzed_info": "x [a.md]", "key_points": ["x [a.md]"], "relationships": []}
    for tool in (tools["summarize_tool"], None):
        llm = ScriptedChatModel(responder=lambda m: scripted_rag_llm().invoke(m).content if "condens" in str(m[0].content) else json.dumps(reply))
        out = run(analysis_agent(llm, summarize_tool=tool)({"question": Q, "research_context": ctx}))
        assert out["metadata"]["was_summarized"] and out["metadata"]["original_doc_count"] == len(ctx)
        assert len(str(llm.calls[-1][-1].content)) < len("\n".join(ctx)), "the analysis saw the condensed context"
    short = run(analysis_agent(ScriptedChatModel(responder=reply))({"question": Q, "research_context": ctx[:2]}))
    assert not short["metadata"]["was_summarized"] and short["key_points"] == ["x [a.md]"]


def test_synthesis_keeps_only_retrieved_citations():
    ctx = ["[a.md § One] Breakers fail fast.", "[b.md § Two] Half-open probes."]
    reply = {"final_answer": "They fail fast [a.md § One] [ghost.md].", "confidence": "0.3", "citations": ["ghost.md"]}
    out = run(synthesis_agent(ScriptedChatModel(responder=reply))({"question": Q, "analyzed_info": "", "research_context": ctx}))
    assert out["citations"] == ["a.md § One"] and out["confidence"] == 0.3
    assert set(out["metadata"]) == {"synthesis_time", "answer_length"}


def test_evaluator_checks_the_model():
    cands = {"structured_rag": "Short [a.md].", "agentic_rag": "Longer answer about circuit breakers [a.md][b.md]."}
    reply = {"scores": [{"agent": "agentic_rag", "relevance": "0.9", "completeness": 8, "clarity": 1.0, "usefulness": 0.7},
                        {"agent": "Structured RAG", "relevance": 0.4, "completeness": 0.4, "clarity": -2, "usefulness": 0.8}],
             "selected_agent": "AgenticRAG", "reasoning": "complete"}
    out = run(evaluator_agent(ScriptedChatModel(responder=reply))({"question": Q, "candidate_answers": cands}))
    assert out["evaluation_scores"] == {"structured_rag": 0.4, "agentic_rag": 0.9} and out["selected_agent"] == "agentic_rag"
    assert out["metadata"]["criteria_scores"]["agentic_rag"]["completeness"] == 1.0, "clamped to 0..1"
    # a candidate the model left out is scored by the heuristic; a reply that is not numbers is repaired once, then the heuristic judges
    partial = run(evaluator_agent(ScriptedChatModel(responder={**reply, "scores": reply["scores"][:1]}))({"question": Q, "candidate_answers": cands}))
    assert set(partial["evaluation_scores"]) == set(cands)
    bad = {**reply, "scores": [{"agent": "agentic_rag", "relevance": "high", "completeness": 1, "clarity": 1, "usefulness": 1}]}
    llm = ScriptedChatModel(responder=bad)
    out = run(evaluator_agent(llm)({"question": Q, "candidate_answers": cands}))
    assert len(llm.calls) == 2 and "failed" in out["reasoning"]
    assert out["metadata"]["criteria_used"] == ["relevance", "completeness", "clarity", "usefulness"]


def test_supervisor_plan_checks_workers():
    plan, _ = supervisor_agent(ScriptedChatModel(responder={"supervisor_plan": "p", "tasks": [{"worker": "PoetryWorker", "task": "a poem"},
                                                                                            {"worker": "code worker", "task": "find code"}]}))
    out = run(plan({"question": Q}))
    assert out["workers_used"] == ["code_worker"] and out["tasks"] == {"code_worker": "find code"}
    plan, _ = supervisor_agent(ScriptedChatModel(responder={"supervisor_plan": "p", "tasks": []}))
    assert run(plan({"question": Q}))["workers_used"] == list(DEFAULT_WORKERS)


def test_combine_names_missing_workers():
    _, combine = supervisor_agent(scripted_rag_llm())
    out = run(combine({"question": Q, "workers_used": ["retrieval_worker", "code_worker"],
                       "worker_results": {"retrieval_worker": {"result": "[a.md] x", "citations": ["a.md"], "context": ["[a.md] x"]},
                                          "code_worker": {"result": "", "error": "RuntimeError: down"}}}))
    assert out["missing"] == ["code_worker"] and "the code worker failed (RuntimeError: down)" in out["final_answer"]
    assert {"combined_result", "final_answer", "citations"} <= set(out)


def test_retrieval_worker_makes_no_model_call(tools):
    llm = scripted_rag_llm()
    out = run(worker_agent("retrieval_worker", llm, list(tools.values()))({"question": Q, "task": "circuit breaker states"}))
    assert not llm.calls and out["citations"] and out["result"].startswith("[")
