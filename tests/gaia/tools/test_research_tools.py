"""The exported tool modules, used from a plain process (no notebook namespace to hide a missing import)."""
from pathlib import Path
import pytest
from gaia_mas.gaia.tools.expert_tools import get_expert_tools
from gaia_mas.gaia.tools.file_tools import allow_roots, read_attachment, use_vision_model
from gaia_mas.gaia.tools.research_tools import get_research_tools
from gaia_mas.core.scripted import ScriptedChatModel
from gaia_mas.core.utils import run_sync
from gaia_mas.gaia.tools.web_tools import cache_get, cache_put, tavily_tool, wikipedia_tool, youtube_transcript_tool

SAMPLES = Path(__file__).resolve().parents[3]/"nbs"/"samples"

@pytest.mark.parametrize("name, expect", [("sample.txt", "heron"), ("sample.py", "fib(20)"), ("sample.csv", "Porto,1530"),
    ("sample.json", '"station": "B7"'), ("sample.jsonld", "A Year of Tides"), ("sample.pdf", "--- Page 3 of 3 ---"),
    ("sample.docx", "Paint\t900"), ("sample.pptx", "Speaker notes"), ("sample.xlsx", "Pie\tFood\t210"),
    ("sample.zip", "=== readme.txt ==="), ("sample.png", "A picture.")])
def test_read_attachment(name, expect):
    with allow_roots(SAMPLES), use_vision_model(ScriptedChatModel(responder="A picture.")):
        assert expect in read_attachment.invoke({"file_path": name})

def test_audio_without_key(monkeypatch):
    for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL"): monkeypatch.delenv(k, raising=False)
    with allow_roots(SAMPLES): assert "OPENAI_API_KEY is not set" in read_attachment.invoke({"file_path": "sample.wav"})

def test_web_tools_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("GAIA_MAS_CACHE", str(tmp_path))
    cache_put("t", "k", "v"); assert cache_get("t", "k") == "v" and cache_get("t", "other") is None
    monkeypatch.setenv("GAIA_MAS_WIKIPEDIA_API", "http://127.0.0.1:9/w/api.php")
    monkeypatch.setenv("GAIA_MAS_YOUTUBE_URL", "http://127.0.0.1:9")
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    assert wikipedia_tool.invoke({"query": "x"}).startswith("Error: cannot reach 127.0.0.1:9")
    assert youtube_transcript_tool.invoke({"url": "https://youtu.be/abcdefghijk"}).startswith("Error: cannot reach YouTube")
    assert "TAVILY_API_KEY is not set" in tavily_tool.invoke({"query": "x"})

def test_research_step_scope():
    tools = run_sync(get_research_tools(browser=False))
    read = next(t for t in tools if t.name == "text_file_tool")
    with tools.step_scope({"file": str(SAMPLES/"sample.txt"), "current_research_index": 0}):
        assert "heron" in read.invoke({"file_path": "sample.txt"})
        assert read.invoke({"file_path": str(Path(__file__))}).startswith("Error: Refused")
        assert read.invoke({"file_path": "sample.csv"}).startswith("Error: Refused")   # beside the attachment, but not it

@pytest.mark.subprocess
def test_expert_python_persists_within_a_run():
    tools = get_expert_tools()
    repl = next(t for t in tools if t.name == "python_repl_tool")
    with tools.step_scope({}):
        repl.invoke({"code": "x = 6 * 7"})
        assert repl.invoke({"code": "x"}) == "42"
    assert "NameError" in repl.invoke({"code": "x"})
