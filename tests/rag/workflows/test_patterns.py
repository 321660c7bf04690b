"""The RAG workflows end to end with the scripted model on the sample collection: responses, sessions, every fallback
and time limit the workflows promise, the parallel overlap, the Mermaid snapshots and `gaia-mas rag ask`."""
import argparse, asyncio, json, shutil, time
from pathlib import Path
import pytest
from pydantic import PrivateAttr
from langchain_core.tools import StructuredTool
from gaia_mas.rag.workflows.agents import WORKERS
from gaia_mas.rag.workflows.state import Limits
from gaia_mas.rag.workflows.patterns import BRANCHES, PATTERNS, build_workflow, select_pattern
from gaia_mas.rag.workflows.answering import RagSystem
from gaia_mas.rag.workflows.scripted import FailingRagModel, failing, scripted_rag_llm, _reply, _role
from gaia_mas.rag.cli import cmd_ask
from gaia_mas.rag.workflows.system import make_rag_system

Q1 = "What is a circuit breaker?"
Q4 = "Explain how to implement circuit breaker pattern in microservices with code examples"
COMMON = {"answer", "pattern", "metadata", "session_id", "citations"}
FIELDS = {"sequential": COMMON, "parallel": COMMON | {"selected_agent", "evaluation_scores"},
          "supervisor": COMMON | {"supervisor_plan", "workers_used"}}


@pytest.fixture(scope="module")
def kb():
    from gaia_mas.rag.kb.ingest import sample_kb
    return sample_kb()


@pytest.fixture(scope="module")
def tools(kb):
    from gaia_mas.rag.kb.tools import make_rag_tools
    return make_rag_tools(kb, llm=scripted_rag_llm())


def ask(llm, tools, q=Q1, pattern="sequential", session="s", **limits):
    return RagSystem(llm, tools, limits=Limits(**limits)).ask(q, session, pattern)


def assert_cited(r):
    "The answer names its sources: a non-empty citation list, each shown in the answer."
    assert r["citations"], r
    assert all(f"[{c}]" in r["answer"] or c in r["answer"] for c in r["citations"]), r["answer"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_each_pattern_end_to_end(tools, pattern):
    r = ask(scripted_rag_llm(), tools, Q4 if pattern == "supervisor" else Q1, pattern)
    assert set(r) == FIELDS[pattern] and r["pattern"] == pattern and r["session_id"] == "s"
    assert "circuit breaker" in r["answer"].lower() and "error" not in r["metadata"]
    assert_cited(r)
    assert r["metadata"]["total_time"] >= 0 and r["metadata"]["timings"]
    if pattern == "sequential":
        assert r["metadata"]["research_context_count"] > 0 and {"analysis_time", "synthesis_time"} <= set(r["metadata"])
    if pattern == "parallel":
        assert set(r["evaluation_scores"]) == set(BRANCHES) and r["selected_agent"] in BRANCHES
        assert all(0 <= s <= 1 for s in r["evaluation_scores"].values()) and r["metadata"]["evaluation_reasoning"]
    if pattern == "supervisor":
        assert {"retrieval_worker", "code_worker"} <= set(r["workers_used"]) and r["supervisor_plan"]
        ran = set(r["metadata"]["timings"]) & set(WORKERS)
        assert ran == set(r["workers_used"]), "only the chosen workers run"
        assert "```" in r["answer"], "the code worker's example reaches the answer"


def test_auto_selects_and_explains(tools):
    rag = RagSystem(scripted_rag_llm(), tools)
    r = rag.ask(Q4, "auto")
    assert r["pattern"] == "supervisor" and r["pattern_selection_reasoning"]
    assert set(r) == FIELDS["supervisor"] | {"pattern_selection_reasoning"}
    assert rag.ask(Q1, "auto-2")["pattern"] == "sequential"


def test_select_pattern_model_then_rules():
    assert select_pattern("Compare circuit breakers and load balancing", scripted_rag_llm())[0] == "sequential"
    assert select_pattern("What is the best way to make a client resilient?", scripted_rag_llm())[0] == "parallel"
    from gaia_mas.core.scripted import ScriptedChatModel
    p, why = select_pattern(Q4, ScriptedChatModel(responder={"pattern": "round-robin", "reasoning": "?"}))
    assert p == "supervisor" and "rule-based" in why


def test_session_carries_over_across_turns_and_patterns(tools):
    rag = RagSystem(scripted_rag_llm(), tools)
    rag.ask(Q1, "chat", "parallel")
    r = rag.ask("And how does it recover after opening?", "chat", "sequential")
    state = rag.graphs["sequential"].get_state(rag.config("chat", "sequential")).values
    assert "circuit breaker" in state["standalone_question"].lower(), state["standalone_question"]
    assert [t["pattern"] for t in state["history"]] == ["parallel", "sequential"]
    assert r["metadata"]["standalone_question"] == state["standalone_question"]
    assert any("Half-open" in c for c in state["research_context"]), "the rewritten question found the passage on recovery"
    for pattern in ("parallel", "supervisor"):
        r = rag.ask("Can you show code for it?", "chat", pattern)
        assert "circuit breaker" in r["metadata"]["standalone_question"].lower(), (pattern, r["metadata"])
        assert "circuit" in r["answer"].lower()
    # another session starts from nothing
    rag.ask("And how does it recover after opening?", "other", "sequential")
    other = rag.graphs["sequential"].get_state(rag.config("other", "sequential")).values
    assert len(other["history"]) == 1 and "circuit" not in other["standalone_question"].lower()


def test_bad_requests_name_the_field(tools):
    rag = RagSystem(scripted_rag_llm(), tools)
    for args, field in ((("  ", "s", "sequential"), "question"), ((Q1, "", "sequential"), "session_id"),
                        ((Q1, "s", "round-robin"), "pattern")):
        with pytest.raises(ValueError, match=field): rag.ask(*args)


def dead_tools():
    def down(query: str) -> str: raise ConnectionError("knowledge base unreachable")
    return [StructuredTool.from_function(down, name=n, description="down")
            for n in ("retrieve_tool", "keyword_search_tool", "hybrid_search_tool")]


def test_research_fails_error_at_once():
    r = ask(scripted_rag_llm(), dead_tools())
    assert "Research failed" in r["metadata"]["error"] and "unreachable" in r["metadata"]["error"]
    assert list(r["metadata"]["timings"]) == ["research"], "analysis and synthesis never ran"
    assert r["answer"].startswith("No answer")


def test_analysis_fails_raw_context_used(tools):
    r = ask(failing(["analysis"]), tools)
    assert any(f.startswith("analysis:") for f in r["metadata"]["fallbacks"])
    assert "error" not in r["metadata"] and r["answer"]; assert_cited(r)


def test_synthesis_fails_analyzed_info_is_answer(tools):
    rag = RagSystem(failing(["synthesis"]), tools)
    r = rag.ask(Q1, "s", "sequential")
    state = rag.graphs["sequential"].get_state(rag.config("s", "sequential")).values
    assert r["answer"].startswith(state["analyzed_info"]) and any(f.startswith("synthesis:") for f in r["metadata"]["fallbacks"])
    assert_cited(r)


def test_both_fail_raw_context_is_answer(tools):
    r = ask(failing(["analysis", "synthesis"]), tools)
    assert r["answer"].startswith("[") and len(r["metadata"]["fallbacks"]) == 2


def test_parallel_branch_fails_others_go_on(tools):
    r = ask(failing(["agentic_rag"]), tools, pattern="parallel")
    assert set(r["evaluation_scores"]) == {"structured_rag", "research_agent"}
    assert "agentic_rag" in r["metadata"]["branch_errors"] and r["answer"]


def test_parallel_branch_times_out(tools):
    r = ask(failing(["structured_rag"], stall=10), tools, pattern="parallel", branch=0.5)
    assert set(r["evaluation_scores"]) == {"agentic_rag", "research_agent"}
    assert r["metadata"]["cut_short"] == ["structured_rag"] and "timed out" in r["metadata"]["branch_errors"]["structured_rag"]
    assert r["metadata"]["total_time"] < 5, "the stalled branch was not waited for"


def test_every_branch_fails_error_not_exception(tools):
    r = ask(failing(["agentic_rag", "structured_rag", "synthesis"]), tools, pattern="parallel")
    assert "every branch failed" in r["metadata"]["error"] and set(r["metadata"]["branch_errors"]) == set(BRANCHES)


def test_evaluator_fails_heuristic_pick(tools):
    r = ask(failing(["evaluator"]), tools, pattern="parallel")
    assert r["selected_agent"] in BRANCHES and "failed" in r["metadata"]["evaluation_reasoning"]


def test_supervisor_fails_default_workers(tools):
    r = ask(failing(["supervisor"]), tools, Q4, "supervisor")
    assert r["workers_used"] == ["retrieval_worker", "analysis_worker", "explanation_worker"]
    assert r["supervisor_plan"].startswith("Default plan") and r["answer"]


def test_worker_fails_combination_says_what_is_missing(tools):
    r = ask(failing(["code_worker"]), tools, Q4, "supervisor")
    assert r["metadata"]["missing_workers"] == ["code_worker"] and "code_worker" in r["metadata"]["worker_errors"]
    assert "code worker failed" in r["answer"] and "Not covered" in r["answer"]


def test_combine_fails_joined_results(tools):
    r = ask(failing(["combine"]), tools, Q4, "supervisor")
    assert r["answer"].startswith("RetrievalWorker:") and any(f.startswith("combine:") for f in r["metadata"]["fallbacks"])


def test_total_time_limit_cuts_short_never_raises(tools):
    r = ask(failing(["synthesis"], stall=30), tools, sequential=1.0)
    md = r["metadata"]
    assert md["cut_short"] == ["synthesis"] and r["answer"] and "error" not in md
    assert md["total_time"] < 10, "the stalled synthesis was not waited for"


def test_supervisor_total_limit(tools):
    r = ask(failing(["code_worker", "analysis_worker"], stall=5), tools, Q4, "supervisor", supervisor=1.0)
    md = r["metadata"]
    assert {"code_worker", "analysis_worker"} <= set(md["cut_short"]) and md["total_time"] < 4 and r["answer"]


class Recording(FailingRagModel):
    "Records when each call starts and ends, by the agent it plays."
    _spans: list = PrivateAttr(default_factory=list)

    @property
    def spans(self): return self._spans

    async def _agenerate(self, messages, stop=None, run_manager=None, **kw):
        t0 = time.monotonic(); out = await super()._agenerate(messages, stop, run_manager, **kw)
        self._spans.append((_role(messages), t0, time.monotonic())); return out


@pytest.mark.parametrize("pattern,q,roles", [("parallel", Q1, ("structured_rag", "agentic_rag", "research")),
                                             ("supervisor", Q4, ("worker",))])
def test_branches_overlap(tools, pattern, q, roles):
    "With 0.3 s per call, the branches' calls overlap in time, and the run takes far less than the calls one after another."
    llm = Recording(responder=_reply, latency=0.3)
    r = RagSystem(llm, tools).ask(q, "overlap", pattern)
    first = [min((s for s in llm.spans if s[0] == role), key=lambda s: s[1]) for role in roles] if pattern == "parallel" \
        else [s for s in llm.spans if s[0] == "worker"]
    assert len(first) >= 3
    assert max(s[1] for s in first) < min(s[2] for s in first), f"calls did not overlap: {first}"
    serial = 0.3 * len(llm.spans)
    assert r["metadata"]["total_time"] < 0.85 * serial, (r["metadata"]["total_time"], len(llm.spans))


MERMAID = {
    "sequential": """__start__ --> research; analysis --> synthesis; research -.-> analysis; research -.-> finish;
                     synthesis --> finish; finish --> __end__;""",
    "parallel": """__start__ --> parallel_branch; agentic_rag --> evaluator; evaluator --> finish; parallel_branch -.-> agentic_rag;
                   parallel_branch -.-> research_agent; parallel_branch -.-> structured_rag; research_agent --> evaluator;
                   structured_rag --> evaluator; finish --> __end__;""",
    "supervisor": """__start__ --> supervisor; analysis_worker --> combine; code_worker --> combine; combine --> finish;
                     comparison_worker --> combine; explanation_worker --> combine; retrieval_worker --> combine;
                     supervisor -.-> analysis_worker; supervisor -.-> code_worker; supervisor -.-> comparison_worker;
                     supervisor -.-> explanation_worker; supervisor -.-> retrieval_worker; finish --> __end__;"""}


@pytest.mark.parametrize("pattern", PATTERNS)
def test_mermaid_snapshot(pattern):
    text = build_workflow(pattern, scripted_rag_llm(), []).get_graph().draw_mermaid()
    edges = [l.strip() for l in text.splitlines() if "-->" in l or "-.->" in l]
    assert edges == [e.strip() + ";" for e in MERMAID[pattern].split(";") if e.strip()]


def test_astream_reports_nodes_then_answer(tools):
    rag = RagSystem(scripted_rag_llm(), tools)
    async def collect(): return [e async for e in rag.astream(Q1, "stream", "auto")]
    evs = asyncio.run(collect())
    assert [e["node"] for e in evs[:-1] if e["event"] == "node"] == ["select_pattern", "research", "analysis", "synthesis", "finish"]
    assert evs[-1]["event"] == "answer" and evs[-1]["answer"] and evs[-1]["pattern_selection_reasoning"]
    tokens = [e for e in evs if e["event"] == "token"]  # the answer's words, as the synthesis agent writes them
    assert len(tokens) > 3 and {e["node"] for e in tokens} == {"synthesis"}
    assert evs[-1]["answer"].startswith("".join(e["text"] for e in tokens))
    done = next(i for i, e in enumerate(evs) if e.get("node") == "synthesis" and e["event"] == "node")
    assert evs.index(tokens[0]) < done  # before the synthesis step finished


def test_per_agent_models_and_missing_one(tools):
    llm = scripted_rag_llm()
    r = RagSystem({"default": llm, "evaluator": failing(["evaluator"])}, tools).ask(Q1, "m", "parallel")
    assert "failed" in r["metadata"]["evaluation_reasoning"]
    with pytest.raises(KeyError, match="No model for the research agent"): RagSystem({"analysis": llm}, tools)


def test_cmd_ask_sessions_persist_between_runs(kb, tmp_path, capsys):
    shutil.copy(kb.url.removeprefix("sqlite:///"), tmp_path/"kb.sqlite")
    args = argparse.Namespace(question=Q1, pattern="sequential", session_id="cli", kb=f"sqlite:///{tmp_path/'kb.sqlite'}",
                              json=True, provider="scripted", latency=0.0, rps=None)
    assert cmd_ask(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["citations"] and (tmp_path/"sessions.sqlite").exists()
    args.question = "And how does it recover after opening?"
    assert cmd_ask(args) == 0
    second = json.loads(capsys.readouterr().out)
    assert "circuit breaker" in second["metadata"]["standalone_question"].lower(), "the second run saw the first turn"
    args.json = False
    assert cmd_ask(args) == 0 and "Sources:\n  [1] " in capsys.readouterr().out
    args.question = " "
    assert cmd_ask(args) == 2 and "question" in capsys.readouterr().err


def test_make_rag_system_real_provider_needs_key(monkeypatch, tools):
    from gaia_mas.core.llm import MissingAPIKeyError
    monkeypatch.delenv("OPENAI_API_KEY", raising=False); monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(MissingAPIKeyError): make_rag_system(provider="openai", model="gpt-4o-mini", tools=tools)
    assert isinstance(make_rag_system(provider="scripted", tools=tools), RagSystem)


def test_run_that_ignores_its_deadline_is_cut_by_the_system(tools, monkeypatch):
    "Even if every call ignored the deadline, the run stops about a second after its limit, with an error, not an exception."
    import gaia_mas.rag.workflows.agent_kit as K, gaia_mas.rag.workflows.agents as A
    for mod in (K, A): monkeypatch.setattr(mod, "call_timeout", lambda limit: limit)
    r = ask(scripted_rag_llm(latency=3), tools, sequential=0.3)
    md = r["metadata"]
    assert md["cut_short"] == ["sequential total time limit (0.3s)"] and "was reached before any answer" in md["error"]
    assert md["total_time"] < 2.5 and r["answer"].startswith("No answer")


def test_astream_closed_early_cancels_the_run(tools):
    "A client that stops reading (an SSE connection closed) stops the run: no task is left behind."
    rag = RagSystem(scripted_rag_llm(latency=0.2), tools)
    async def go():
        gen = rag.astream(Q1, "early", "parallel")
        first = await gen.__anext__()
        await gen.aclose()
        await asyncio.sleep(0.1)
        return first, [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    first, left = asyncio.run(go())
    assert first["node"] == "parallel_branch" and not left, left


@pytest.mark.subprocess
def test_cmd_ask_sessions_in_postgres(pg_url, tmp_path, capsys):
    "With a Postgres knowledge base, `rag ask` keeps its sessions in that database: a second process continues the conversation."
    import os, subprocess, sys
    from gaia_mas.core.pg_server import fresh_database
    from gaia_mas.rag.kb.ingest import ingest, sample_dir
    from gaia_mas.rag.kb.api import HashEmbeddings, open_kb
    with fresh_database(pg_url, f"f1_sessions_{os.getpid()}") as url:
        with open_kb(url, HashEmbeddings()) as kb: ingest(kb, [sample_dir()/"docs"/"circuit-breakers.md"])
        base = argparse.Namespace(pattern="sequential", session_id="pg", kb=url, json=True, provider="scripted", latency=0.0, rps=None)
        assert cmd_ask(argparse.Namespace(**vars(base), question=Q1)) == 0
        capsys.readouterr()
        code = ("import argparse, sys; from gaia_mas.rag.cli import cmd_ask; "
                f"sys.exit(cmd_ask(argparse.Namespace(**{vars(base)!r}, question='And how does it recover after opening?')))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env={**os.environ, "OPIK_TRACK_DISABLE": "true"})
        assert out.returncode == 0, out.stderr[-2000:]
        r = json.loads(out.stdout)
        assert "circuit breaker" in r["metadata"]["standalone_question"].lower()
