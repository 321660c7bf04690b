"""`POST /v1/chat/completions`, which the chat page calls, answered by the README's local model (Gemma 3 270M on
llama.cpp, no key) through the in-process app: the plain and the streamed answer each say something (never empty or
"..."), are held to the passages they cite, and cite a passage of the source the question is about.
"""
from __future__ import annotations
import json
import httpx, pytest

pytestmark = pytest.mark.real_server
Q = "What is load shedding?"


def streamed(c:httpx.Client, body:dict) -> tuple[str, list]:
    "(the streamed answer's text, its citations) from the server-sent chunks."
    text, cits = "", []
    with c.stream("POST", "/v1/chat/completions", json={**body, "stream": True}) as r:
        assert r.status_code == 200, r.read()[:300]
        for line in r.iter_lines():
            if not line.startswith("data: {"): continue
            chunk = json.loads(line[6:])
            text += "".join((ch.get("delta") or {}).get("content") or "" for ch in chunk.get("choices") or [])
            cits += chunk.get("citations") or []
    return text, cits


def test_v1_answers_with_the_local_model(local_model_url):
    from gaia_mas.core.testing import LiveServer
    from gaia_mas.rag.kb.ingest import sample_kb
    from gaia_mas.rag.service.app import create_app
    from gaia_mas.rag.workflows.grounding import degenerate, unsupported
    from gaia_mas.rag.workflows.system import make_rag_system
    system = make_rag_system(provider="openai", base_url=local_model_url, llm_timeout=60, max_retries=1,
                             knowledge_base=sample_kb())
    body = {"model": "sequential", "messages": [{"role": "user", "content": Q}]}
    with LiveServer(create_app(system)) as url, httpx.Client(base_url=url, timeout=240) as c:
        r = c.post("/v1/chat/completions", json=body)
        assert r.status_code == 200, r.text[:300]
        plain, plain_cits = r.json()["choices"][0]["message"]["content"], r.json()["citations"]
        text, cits = streamed(c, body)
    print(f"\nplain: {plain}\n{[d['citation'] for d in plain_cits]}\nstreamed: {text}\n{[d['citation'] for d in cits]}")
    for answer, details in ((plain, plain_cits), (text, cits)):
        said = answer.split("\n\nSources:")[0].strip()
        assert said and not degenerate(said), answer
        assert not unsupported(said, Q, [d.get("passage") or "" for d in details]), answer  # held to the passages
        assert any("load-shedding" in d["citation"] for d in details), details
