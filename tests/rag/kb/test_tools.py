"""The RAG tools over the sample knowledge base, and sample_kb's caching."""
import pytest
from gaia_mas.rag.kb.api import open_kb
from gaia_mas.rag.kb.tools import make_rag_tools, summarize
from gaia_mas.rag.kb import ingest as ingest_mod
from gaia_mas.core.scripted import ScriptedChatModel

NAMES = ["retrieve_tool", "keyword_search_tool", "metadata_search_tool", "hybrid_search_tool", "summarize_tool"]


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    kb = ingest_mod.sample_kb(tmp_path_factory.mktemp("kb")/"sample.sqlite")
    yield kb
    kb.close()


def call(tool, **args):
    return tool.invoke({"type": "tool_call", "id": "c1", "name": tool.name, "args": args})


def test_tool_names_and_results(kb):
    tools = {t.name: t for t in make_rag_tools(kb, ScriptedChatModel(responder="short [1]"))}
    assert list(tools) == NAMES and [t.name for t in make_rag_tools(kb)] == NAMES[:4]
    for name in NAMES[:2] + NAMES[3:4]:
        msg = call(tools[name], query="How does a token bucket rate limiter work?", k=3)
        assert msg.content.startswith("[1] rate-limiting.md § "), (name, msg.content[:200])
        assert len(msg.artifact) == 3 and msg.artifact[0]["citation"] in msg.content
    msg = call(tools["metadata_search_tool"], filters={"filetype": "pdf", "year": {"lte": 2020}}, k=10)
    assert msg.artifact and all(h["metadata"]["filetype"] == "pdf" and h["metadata"]["year"] <= 2020 for h in msg.artifact)
    msg = call(tools["metadata_search_tool"], filters={"team": "payments"}, query="idempotency key", k=2)
    assert msg.artifact[0]["citation"].startswith("idempotency.md")


def test_tool_failures_suggest_another_tool(kb):
    tools = {t.name: t for t in make_rag_tools(kb)}
    msg = call(tools["retrieve_tool"], query=" ")
    assert msg.content.startswith("retrieve_tool failed: empty query") and "Try keyword_search_tool" in msg.content and msg.artifact == []
    assert "unknown filter field 'dept'" in call(tools["hybrid_search_tool"], query="x", filters={"dept": 1}).content
    assert call(tools["metadata_search_tool"], filters={}).content.startswith("metadata_search_tool failed")
    empty = call(tools["keyword_search_tool"], query="xylophone quokka")
    assert empty.content.startswith("warning: no passages matched") and empty.artifact == []


def test_results_bounded_and_deduplicated(kb):
    tools = {t.name: t for t in make_rag_tools(kb, max_chars=100)}
    msg = call(tools["hybrid_search_tool"], query="retries backoff jitter", k=20)
    assert all(len(p.split("\n", 1)[1]) <= 100 + 6 for p in msg.content.split("\n\n[") if "\n" in p)
    ids = [(h["source"], h["text"]) for h in msg.artifact]
    assert len(ids) == len(set(ids))


def test_summarize_map_reduce_keeps_citations(kb):
    seen = []
    def responder(msgs):
        seen.append(msgs[-1].content)
        return "Retries need budgets [1]."
    llm = ScriptedChatModel(responder=responder)
    text = "\n\n".join(f"[{i}] {h.citation}\n{h.text}" for i, h in enumerate(kb.search("retries", k=20), 1))
    assert summarize(llm, text, "q", budget=100_000) == "Retries need budgets [1]." and len(llm.calls) == 1
    out = summarize(llm, text * 4, "q", budget=3000)
    assert out == "Retries need budgets [1]." and len(llm.calls) > 3
    assert "[1]" in llm.calls[0][0].content or "citation" in llm.calls[1][0].content
    with pytest.raises(ValueError, match="nothing to summarize"): summarize(llm, "  ")


def test_sample_kb_is_built_once(tmp_path, monkeypatch):
    path = tmp_path/"s.sqlite"
    first = ingest_mod.sample_kb(path); n = first.stats()["chunks"]; first.close()
    assert n > 33
    monkeypatch.setattr(ingest_mod, "ingest", lambda *a, **k: pytest.fail("sample_kb re-ingested an unchanged collection"))
    again = ingest_mod.sample_kb(path)
    assert again.stats()["chunks"] == n and again.search("bulkhead", k=1)[0].citation.startswith("bulkheads.md")
    again.close()
