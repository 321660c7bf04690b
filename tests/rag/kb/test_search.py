"""Malformed filters and metadata through every door (the Python API on both engines, the HTTP API, the retrieval tools
and the command line): refused with one clear message that names the limit, never a server error or a crash."""
import json, shutil
import httpx, pytest
from gaia_mas.core.testing import LiveServer
from loopback import TLS
from gaia_mas.rag.kb.api import HashEmbeddings, open_kb
from gaia_mas.rag.kb.ingest import ingest, sample_dir
from gaia_mas.rag.service.app import create_app
from gaia_mas.rag.workflows.system import make_rag_system
from gaia_mas.rag.kb.tools import make_rag_tools

from rag_serve import run_measured

pytestmark = pytest.mark.security

KEY = "test-key-filters"
DOC = b"# Bulkheads\n\n## Idea\n\nA bulkhead isolates the resources of each dependency from the others.\n"
DEEP = "[" * 1000  # 1,000 nested lists, never closed
BAD_FILTERS = {  # each once crashed an engine (binding a list, list() of a number, integer overflow, NUL, surrogate)
    "a list in a list": {"title": [["x"]]},
    "a list for a range": {"year": {"gte": [2020]}},
    "'in' with one number": {"year": {"in": 2020}},
    "an object as a value": {"team": {"eq": {"a": 1}}},
    "a number beyond 64 bits": {"year": 10**20},
    "a NUL character": {"team": "a\x00b"},
    "an unpaired surrogate": {"team": "\ud800"},
    "a list, not an object": ["team"],
}


@pytest.fixture
def docs(tmp_path):
    d = tmp_path/"docs"; d.mkdir()
    for name in ("circuit-breakers.md", "rate-limiting.md"): shutil.copy(sample_dir()/"docs"/name, d/name)
    return d


def test_the_python_api_refuses_malformed_filters(kb_url, docs):
    with open_kb(kb_url, HashEmbeddings(64)) as kb:
        ingest(kb, [docs])
        for name, bad in BAD_FILTERS.items():
            for mode in ("keyword", "semantic", "hybrid"):
                with pytest.raises(ValueError, match="filter"): kb.search("circuit breaker", mode=mode, filters=bad)
            with pytest.raises(ValueError, match="filter"): kb.filter_search(bad)
        with pytest.raises(ValueError, match="deeper than 3 levels"): kb.search("x", filters={"title": [[["x"]]]})
        assert kb.search("circuit breaker", filters={"team": "platform"})  # and good filters still work


@pytest.fixture
def client(tmp_path):
    system = make_rag_system(provider="scripted", knowledge_base=open_kb(tmp_path/"kb.sqlite", HashEmbeddings()))
    with LiveServer(create_app(system, api_key=KEY)) as url, \
         httpx.Client(base_url=url, headers={"X-API-Key": KEY}, timeout=60, verify=TLS) as c:
        assert c.post("/kb/documents", files=[("files", ("bulkheads.md", DOC))]).status_code == 201
        yield c


def test_http_search_answers_400_to_malformed_filters(client):
    bad = {name: json.dumps(f) for name, f in BAD_FILTERS.items()} | {"1,000 nested [": DEEP}
    for name, f in bad.items():
        r = client.get("/kb/search", params={"q": "bulkhead", "filter": f})
        assert r.status_code == 400 and "filter" in r.json()["error"], (name, r.status_code, r.text[:300])
    errors = {n: client.get("/kb/search", params={"q": "bulkhead", "filter": bad[n]}).json()["error"]
              for n in ("a list in a list", "1,000 nested [")}
    assert "nests at most 3 levels" in errors["a list in a list"], errors
    assert "deeper than 3 levels" in errors["1,000 nested ["], errors
    big = json.dumps({"source": {"in": [f"/d/{i:05}.md" for i in range(100)]}})  # under the query's 2,000 characters
    assert client.get("/kb/search", params={"q": "bulkhead", "filter": big}).status_code == 200
    assert client.get("/kb/search", params={"q": "bulkhead"}).json()["hits"]  # the server is fine


def test_an_upload_with_malformed_meta_answers_400(client):
    deep = '{"a": ' + "[" * 5000 + "]" * 5000 + "}"
    for meta, limit in ((deep, "deeper than 4 levels"), (json.dumps({"notes": "x" * 40_000}), "32,768 characters")):
        r = client.post("/kb/documents", files=[("files", ("deep.md", DOC))], data={"meta": [meta]})
        assert r.status_code == 400 and limit in r.json()["error"], (r.status_code, r.text[:300])
    assert client.get("/kb/documents").json()["total"] == 1  # nothing stored, and the server is fine


def test_the_tools_say_what_is_wrong_with_a_filter(tmp_path, docs):
    with open_kb(tmp_path/"kb.sqlite", HashEmbeddings(64)) as kb:
        ingest(kb, [docs])
        tools = {t.name: t for t in make_rag_tools(kb)}
        for name, args in (("metadata_search_tool", {"filters": {"title": [["x"]]}}),
                           ("hybrid_search_tool", {"query": "breaker", "filters": {"title": [["x"]]}})):
            msg = tools[name].invoke({"type": "tool_call", "id": "c1", "name": name, "args": args})
            assert "nests at most 3 levels" in msg.content and not msg.artifact, (name, msg.content)


@pytest.mark.subprocess
def test_a_number_too_long_to_count_is_text_in_tags_and_filters_alike(tmp_path, docs):
    "One rule reads --meta tags and --filter values: a 20-digit serial stays text in both, so the filter finds the tag."
    kb, serial = f"sqlite:///{tmp_path/'kb.sqlite'}", "99999999999999999999"
    p = run_measured("rag", "ingest", str(docs), "--kb", kb, "--embeddings", "hash-64", "--meta", f"serial={serial}")[0]
    assert p.returncode == 0, p.stderr
    p = run_measured("rag", "search", "breaker", "--kb", kb, "--embeddings", "hash-64", "--filter", f"serial={serial}",
                     "--json")[0]
    assert p.returncode == 0 and "Traceback" not in p.stderr, (p.returncode, p.stderr)
    hits = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]   # one hit per line
    assert hits and all(h["metadata"]["serial"] == serial for h in hits), p.stdout[:500]
