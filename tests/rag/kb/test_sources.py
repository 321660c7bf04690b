"""Server paths stay on the server: a user (HOME /home/alice-like) runs `gaia-mas rag ingest ~/work/handbook` and
`gaia-mas serve` as typed, with the defaults; `/kb/documents`, `/kb/search`, the chat answers (plain and streamed) and
the OpenAI API then name the documents `handbook/...`, never by an absolute path with the user's name in it. A name
given with `--name` is used instead; a document can be removed and filtered by its name. A knowledge base built before
roots were recorded keeps working: its documents show their file names, and ingesting the folder again changes
nothing but the names."""
import json, re
import httpx, pytest

from cli_support import GAIA, newcomer_env
from rag_serve import serve
import subprocess

pytestmark = [pytest.mark.process, pytest.mark.security]
USER = "alice-secret-user"
DOCS = {"ops/on-call.md": "# On call\n\n## Paging\n\nPage the second engineer after ten minutes of silence.\n",
        "intro.md": "# Handbook\n\n## Circuit breakers\n\nA circuit breaker stops calls to a failing service.\n"}


def rag(env, *args) -> subprocess.CompletedProcess:
    return subprocess.run([*GAIA, "rag", *args], capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture(scope="module")
def user(tmp_path_factory):
    "A new user whose home folder's path holds their name, with a handbook folder in it, ingested as typed."
    home = tmp_path_factory.mktemp("home")/USER
    env = newcomer_env(home, GAIA_MAS_API_KEY="")
    for name, text in DOCS.items():
        f = home/"work"/"handbook"/name; f.parent.mkdir(parents=True, exist_ok=True); f.write_text(text)
    r = rag(env, "ingest", str(home/"work"/"handbook"))
    assert r.returncode == 0, r.stderr
    return home, env


def no_server_path(text:str, home) -> None:
    assert USER not in text and str(home) not in text, text[:2000]


def test_every_answer_names_documents_relative_to_the_folder(user):
    home, env = user
    with serve(env=env) as (url, _, _lines), httpx.Client(base_url=url, timeout=120) as c:
        docs = c.get("/kb/documents")
        assert sorted(d["source"] for d in docs.json()["documents"]) == ["handbook/intro.md", "handbook/ops/on-call.md"]
        hits = c.get("/kb/search", params={"q": "circuit breaker", "mode": "keyword"})
        assert hits.json()["hits"][0]["source"] == "handbook/intro.md"
        assert hits.json()["hits"][0]["metadata"]["source"] == "handbook/intro.md"
        chat = c.post("/multiagent/sequential/chat", json={"question": "What does a circuit breaker do?"})
        assert {d["source"] for d in chat.json()["citation_details"]} <= {"handbook/intro.md", "handbook/ops/on-call.md"}
        stream = c.post("/multiagent/sequential/chat/stream", json={"question": "Whom do I page?"})
        v1 = c.post("/v1/chat/completions", json={"model": "sequential",
                                                  "messages": [{"role": "user", "content": "Whom do I page?"}]})
        assert v1.json()["citations"] and all(not d["source"].startswith("/") for d in v1.json()["citations"])
        for r in (docs, hits, chat, stream, v1): no_server_path(r.text, home)


def test_filter_and_remove_by_the_name_a_client_sees(user, tmp_path):
    home, env = user
    kb = tmp_path/"own.sqlite"
    assert rag(env, "ingest", "--kb", str(kb), str(home/"work"/"handbook")).returncode == 0
    with serve("--kb", str(kb), env=env) as (url, _, _lines), httpx.Client(base_url=url, timeout=60) as c:
        only = c.get("/kb/search", params={"q": "engineer", "mode": "keyword",
                                           "filter": json.dumps({"source": "handbook/ops/on-call.md"})})
        assert [h["source"] for h in only.json()["hits"]] == ["handbook/ops/on-call.md"]
        under = c.get("/kb/search", params={"q": "breaker", "mode": "keyword",
                                            "filter": json.dumps({"source": {"prefix": "handbook/ops/"}})})
        assert all(h["source"].startswith("handbook/ops/") for h in under.json()["hits"])
        r = c.delete("/kb/documents", params={"source": "handbook/ops/on-call.md"})
        assert r.status_code == 200 and r.json()["removed"] == ["handbook/ops/on-call.md"], r.text
        assert [d["source"] for d in c.get("/kb/documents").json()["documents"]] == ["handbook/intro.md"]
        no_server_path(r.text, home)


def test_a_name_given_at_ingest(user, tmp_path):
    home, env = user
    kb = tmp_path/"named.sqlite"
    assert rag(env, "ingest", "--kb", str(kb), "--name", "team-handbook", str(home/"work"/"handbook")).returncode == 0
    with serve("--kb", str(kb), env=env) as (url, _, _lines):
        names = sorted(d["source"] for d in httpx.get(f"{url}/kb/documents", timeout=60).json()["documents"])
    assert names == ["team-handbook/intro.md", "team-handbook/ops/on-call.md"]


def test_a_knowledge_base_without_roots_keeps_working(user, tmp_path):
    "Built before ingests recorded their folders (simulated by clearing the setting): file names, then the same names."
    from gaia_mas.rag.kb.api import open_kb
    home, env = user
    kb = tmp_path/"old.sqlite"
    assert rag(env, "ingest", "--kb", str(kb), str(home/"work"/"handbook")).returncode == 0
    with open_kb(kb) as k: k.set_info("source_roots", "{}"); stored = k.sources()
    with serve("--kb", str(kb), env=env) as (url, _, _lines):
        r = httpx.get(f"{url}/kb/documents", timeout=60)
    assert sorted(d["source"] for d in r.json()["documents"]) == ["intro.md", "on-call.md"]; no_server_path(r.text, home)
    again = rag(env, "ingest", "--kb", str(kb), str(home/"work"/"handbook"))
    assert again.returncode == 0 and re.match(r"0 added, 0 updated, 2 unchanged", again.stdout), again.stdout
    with open_kb(kb) as k: assert k.sources() == stored  # the keys the next ingest compares against: unchanged
    with serve("--kb", str(kb), env=env) as (url, _, _lines):
        names = sorted(d["source"] for d in httpx.get(f"{url}/kb/documents", timeout=60).json()["documents"])
    assert names == ["handbook/intro.md", "handbook/ops/on-call.md"]


def test_an_absolute_path_is_neither_guessed_nor_accepted(user):
    """A `source` filter matches the names a client sees: a prefix of the server's folder finds nothing, one character
    at a time or whole, and `GET /kb/documents/<absolute path>` knows no such document."""
    home, env = user
    with serve(env=env) as (url, _, _lines), httpx.Client(base_url=url, timeout=60) as c:
        def hits(prefix):
            r = c.get("/kb/search", params={"q": "engineer", "mode": "keyword",
                                            "filter": json.dumps({"source": {"prefix": prefix}})})
            assert r.status_code == 200, r.text
            return r.json()["hits"]
        assert hits("handbook/"), "a public prefix finds its documents"
        for prefix in ("/", str(home)[:2], str(home), str(home/"work"/"handbook"/"ops")):
            assert hits(prefix) == [], f"the prefix {prefix!r} of the server's folder matched"
        exact = c.get("/kb/search", params={"q": "engineer", "mode": "keyword", "filter": json.dumps(
            {"source": str(home/"work"/"handbook"/"ops"/"on-call.md")})})
        assert exact.json()["hits"] == [], exact.text
        r = c.get(f"/kb/documents/{home/'work'/'handbook'/'ops'/'on-call.md'}")
        assert r.status_code == 404, r.text
        assert c.get("/kb/documents/handbook/ops/on-call.md").status_code == 200
        missed = c.get("/kb/search", params={"q": "zebra", "mode": "keyword",
                                             "filter": json.dumps({"source": {"prefix": "handbook/"}})})
        assert missed.json()["hits"] == [] and "handbook/" in missed.text, missed.text
        no_server_path(missed.text, home)  # the warning names the filter as sent, not the stored paths it stands for
