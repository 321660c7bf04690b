"""The rag commands through argparse, as `gaia-mas` runs them: exit codes, output and error messages."""
import argparse, json, os, re, subprocess, sys
from pathlib import Path
import pytest
from gaia_mas.core.options_cli import serve_options
from gaia_mas.rag.cli import add_rag_parsers, parse_filters, parse_meta
from gaia_mas.rag.kb.ingest import sample_dir


def run(capsys, *argv):
    "Parse with a parser built like gaia-mas's and run the handler, mapping errors to exit codes as gaia-mas's main does."
    p = argparse.ArgumentParser(prog="gaia-mas"); add_rag_parsers(p.add_subparsers(dest="command", required=True))
    args = p.parse_args(list(argv))
    try: code = args.func(args)
    except (FileNotFoundError, ImportError, ValueError, RuntimeError) as e: print(f"gaia-mas: {e}", file=sys.stderr); code = 2
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def built(kb_url, capsys, monkeypatch):
    monkeypatch.delenv("GAIA_MAS_KB", raising=False)
    code, out, err = run(capsys, "rag", "ingest", str(sample_dir()/"docs"), "--kb", kb_url, "--embeddings", "hash", "--meta", "owner=docs-team")
    assert code == 0, err
    assert out.startswith("33 added, 0 updated, 0 unchanged, 0 skipped;"), out
    return kb_url


def test_search_modes_and_json(built, capsys):
    for mode in ("keyword", "semantic", "hybrid"):
        code, out, err = run(capsys, "rag", "search", "What is a circuit breaker?", "--kb", built, "--mode", mode, "--k", "3")
        assert code == 0 and out.startswith("[1] docs/circuit-breaker") and "docs/circuit-breakers.md § What a circuit breaker is" in out, (mode, out, err)
        assert "[3] " in out and "[4] " not in out and not err
    code, out, err = run(capsys, "rag", "search", "token bucket", "--kb", built, "--json", "--k", "2", "--filter", "tags=rate-limiting")
    hits = [json.loads(l) for l in out.splitlines()]
    assert code == 0 and len(hits) == 2 and all({"source", "score", "text", "metadata", "citation"} <= set(h) for h in hits)
    assert all("rate-limiting" in h["metadata"]["tags"] and h["metadata"]["owner"] == "docs-team" for h in hits)


def test_stats_rm_and_reingest(built, capsys):
    code, out, err = run(capsys, "rag", "stats", "--kb", built, "--json")
    s = json.loads(out)
    assert code == 0 and s["documents"] == 33 and s["chunks"] == s["vectors"] > 33 and s["embedding_model"] == "hash-256"
    code, out, err = run(capsys, "rag", "stats", "--kb", built)
    assert "semantic search on" in out and "documents       33" in out
    target = sample_dir()/"docs"/"bulkheads.md"
    code, out, err = run(capsys, "rag", "rm", str(target), "--kb", built)
    assert code == 0 and out.strip() == "removed docs/bulkheads.md"
    code, out, err = run(capsys, "rag", "rm", str(target), "--kb", built)
    assert code == 1 and "nothing to remove" in err
    code, out, err = run(capsys, "rag", "ingest", str(sample_dir()/"docs"), "--kb", built, "--meta", "owner=docs-team")
    assert code == 0 and out.startswith("1 added, 0 updated, 32 unchanged, 0 skipped")


def test_one_name_per_document(built, capsys, tmp_path):
    "The CLI names a document as the API and the citations do (docs/..., uploads/...) and takes that name; a path works too."
    from gaia_mas.rag.kb.ingest import chunk_document
    from gaia_mas.rag.kb.api import open_kb
    note = tmp_path/"team-note.md"; note.write_text("# Team note\n\nThe zebra rota starts on Monday.\n")
    doc, chunks = chunk_document(note); doc["source"] = "uploads/team-note.md"  # as POST /kb/documents stores it
    for c in chunks: c["metadata"]["source"] = doc["source"]
    with open_kb(built) as kb: kb.write_document(doc, chunks)
    code, out, err = run(capsys, "rag", "search", "zebra rota", "--kb", built, "--mode", "keyword", "--k", "1")
    assert code == 0 and out.startswith("[1] uploads/team-note.md § Team note"), out
    code, out, err = run(capsys, "rag", "search", "circuit breaker", "--kb", built, "--mode", "keyword", "--json",
                         "--filter", "source^=docs/")
    assert code == 0 and {json.loads(l)["source"][:5] for l in out.splitlines()} == {"docs/"}, out
    golden = tmp_path/"golden.jsonl"; golden.write_text('{"question": "What is a circuit breaker?", "relevant": ["circuit-breakers.md"]}\n')
    code, out, err = run(capsys, "rag", "eval", str(golden), "--kb", built, "--modes", "keyword", "--json")
    q = json.loads(out)["questions"][0]
    assert code == 0 and q["sources"] == ["docs/circuit-breakers.md"] and "docs/circuit-breakers.md" in q["modes"]["keyword"]["ranked"], q
    code, out, err = run(capsys, "rag", "rm", "uploads/team-note.md", "--kb", built)
    assert code == 0 and out == "removed uploads/team-note.md\n", (out, err)
    code, out, err = run(capsys, "rag", "rm", "docs/timeouts.md", str(sample_dir()/"docs"/"idempotency.md"), "--kb", built)
    assert code == 0 and out == "removed docs/idempotency.md\nremoved docs/timeouts.md\n", (out, err)
    code, out, err = run(capsys, "rag", "rm", "uploads/team-note.md", "--kb", built)
    assert code == 1 and "nothing to remove" in err and "uploads/note.md" in err


def test_ingest_counts_skipped_files_by_kind(tmp_path, capsys, monkeypatch):
    "Images and stylesheets are counted by kind, listed with -v; the text's time and the vectors' are given apart."
    monkeypatch.delenv("GAIA_MAS_KB", raising=False)
    site = tmp_path/"site"; (site/"img").mkdir(parents=True)
    (site/"page.md").write_text("# Page\n\nHello.\n")
    for i in range(3): (site/"img"/f"{i}.png").write_bytes(b"\x89PNG")
    (site/"style.css").write_text("p{}"); (site/"broken.pdf").write_bytes(b"%PDF-1.4 not really")
    url = f"sqlite:///{tmp_path/'kb.sqlite'}"
    code, out, err = run(capsys, "rag", "ingest", str(site), "--kb", url, "--embeddings", "hash")
    assert code == 0 and "5 skipped (3 images, 1 file that failed to parse, 1 stylesheet)" in out, out
    assert re.search(r"chunks written in [\d.]+s, 1 vectors in [\d.]+s \([\d.]+ chunks/s\); [\d.]+s in all$", out.strip()), out
    assert "broken.pdf" in err and ".png" not in err and "-v lists them" in err, err
    (site/"page.md").write_text("# Page\n\nHello again.\n")
    code, out, err = run(capsys, "rag", "ingest", str(site), "--kb", url, "-v")
    assert code == 0 and err.count(".png: unsupported file type") == 3 and "style.css" in err, err


def test_stats_shows_the_metadata_a_user_gave(tmp_path, capsys, monkeypatch):
    "An HTML page's viewport and generator tags are page markup, not metadata; its own tags and --meta are."
    monkeypatch.delenv("GAIA_MAS_KB", raising=False)
    page = tmp_path/"page.html"
    page.write_text('<html><head><meta name="viewport" content="width=device-width"><meta name="generator" content="Hugo">'
                    '<meta name="team" content="sre"><title>Page</title></head><body><p>Hello.</p></body></html>')
    url = f"sqlite:///{tmp_path/'kb.sqlite'}"
    assert run(capsys, "rag", "ingest", str(page), "--kb", url, "--embeddings", "hash", "--meta", "year=2024")[0] == 0
    code, out, err = run(capsys, "rag", "stats", "--kb", url)
    assert code == 0 and out.splitlines()[-1].split(maxsplit=1) == ["metadata", "team, year"], out


def test_bad_input(tmp_path, capsys, monkeypatch, kb_url):
    monkeypatch.delenv("GAIA_MAS_KB", raising=False)
    missing = tmp_path/"missing.sqlite"
    code, out, err = run(capsys, "rag", "search", "breaker", "--kb", f"sqlite:///{missing}")
    assert code == 2 and str(missing) in err and "gaia-mas rag ingest" in err and not missing.exists()
    code, out, err = run(capsys, "rag", "stats", "--kb", f"sqlite:///{missing}")
    assert code == 2 and "no knowledge base at" in err
    code, out, err = run(capsys, "rag", "ingest", str(tmp_path), "--kb", kb_url, "--meta", "team")
    assert code == 2 and "malformed --meta 'team': expected key=value" in err
    (tmp_path/"a.md").write_text("# A\n\nBulkheads.\n")
    assert run(capsys, "rag", "ingest", str(tmp_path/"a.md"), "--kb", kb_url, "--embeddings", "hash")[0] == 0
    code, out, err = run(capsys, "rag", "search", "  ", "--kb", kb_url)
    assert code == 2 and "empty query" in err
    code, out, err = run(capsys, "rag", "search", "bulkheads", "--kb", kb_url, "--filter", "department=sre")
    assert code == 2 and "unknown filter field 'department'" in err and "title" in err
    code, out, err = run(capsys, "rag", "search", "bulkheads", "--kb", kb_url, "--filter", "year")
    assert code == 2 and "malformed --filter" in err
    code, out, err = run(capsys, "rag", "search", "zebra", "--kb", kb_url, "--mode", "keyword")
    assert code == 1 and "no passages matched" in err
    code, out, err = run(capsys, "rag", "ingest", str(tmp_path/"nope"), "--kb", kb_url)
    assert code == 1 and "skipped" in err and "no such file or folder" in err


def test_builtin_embedder_without_key(tmp_path, capsys, monkeypatch):
    "No key, no server: the built-in model embeds, and semantic search finds a reworded question."
    for k in ("OPENAI_API_KEY", "GAIA_MAS_EMBEDDINGS", "GAIA_MAS_EMBEDDINGS_BASE_URL", "GAIA_MAS_KB"): monkeypatch.delenv(k, raising=False)
    url = f"sqlite:///{tmp_path/'kb.sqlite'}"
    docs = sample_dir()/"docs"
    code, out, err = run(capsys, "rag", "ingest", str(docs/"timeouts.md"), str(docs/"bulkheads.md"), "--kb", url, "--no-progress")
    assert code == 0 and "vectors in" in out and "semantic search is off" not in out, (out, err)
    code, out, err = run(capsys, "rag", "stats", "--kb", url)
    assert "all-MiniLM-L6-v2 (semantic search on)" in out
    code, out, err = run(capsys, "rag", "search", "how long should a call wait before giving up", "--kb", url, "--mode", "semantic")
    assert code == 0 and out.startswith("[1] timeouts.md"), (out, err)


def test_semantic_off_with_none(tmp_path, capsys, monkeypatch):
    for k in ("OPENAI_API_KEY", "GAIA_MAS_EMBEDDINGS", "GAIA_MAS_EMBEDDINGS_BASE_URL", "GAIA_MAS_KB"): monkeypatch.delenv(k, raising=False)
    url = f"sqlite:///{tmp_path/'kb.sqlite'}"
    code, out, err = run(capsys, "rag", "ingest", str(sample_dir()/"docs"/"timeouts.md"), "--kb", url, "--embeddings", "none")
    assert code == 0 and "semantic search is off" in out
    code, out, err = run(capsys, "rag", "search", "deadline", "--kb", url, "--mode", "semantic", "--embeddings", "none")
    assert code == 1 and "semantic search is off" in err and out == ""
    code, out, err = run(capsys, "rag", "search", "deadline", "--kb", url, "--embeddings", "none")
    assert code == 0 and "fell back to keyword search" in err and out.startswith("[1] timeouts.md")
    code, out, err = run(capsys, "rag", "ingest", str(sample_dir()/"docs"/"bulkheads.md"), "--kb", url, "--embeddings", "nomic-embed-text")
    assert code == 0 and "no embedder for 'nomic-embed-text'" in err and "--embeddings-url" in err, err


def test_no_embed_then_embed(tmp_path, capsys, monkeypatch):
    "Text first (keyword search at once), vectors later with `rag embed`; hybrid search says what it cannot see yet."
    for k in ("OPENAI_API_KEY", "GAIA_MAS_EMBEDDINGS", "GAIA_MAS_EMBEDDINGS_BASE_URL", "GAIA_MAS_KB"): monkeypatch.delenv(k, raising=False)
    url = f"sqlite:///{tmp_path/'kb.sqlite'}"
    code, out, err = run(capsys, "rag", "ingest", str(sample_dir()/"docs"), "--kb", url, "--embeddings", "hash", "--no-embed")
    assert code == 0 and out.startswith("33 added") and "semantic search is off" in out
    code, out, err = run(capsys, "rag", "search", "circuit breaker", "--kb", url, "--mode", "keyword")
    assert code == 0 and "[1]" in out
    code, out, err = run(capsys, "rag", "search", "circuit breaker", "--kb", url, "--embeddings", "hash")
    assert code == 0 and "rag embed" in err, err
    code, out, err = run(capsys, "rag", "embed", "--kb", url, "--embeddings", "hash", "--no-progress")
    assert code == 0 and "vectors added" in out and "0 chunks without a vector" in out, (out, err)
    code, out, err = run(capsys, "rag", "search", "circuit breaker", "--kb", url, "--mode", "semantic")
    assert code == 0 and not err and "[1]" in out


def test_default_kb_from_env(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GAIA_MAS_CACHE", str(tmp_path/"cache"))
    monkeypatch.delenv("GAIA_MAS_KB", raising=False)
    code, out, err = run(capsys, "rag", "stats")
    assert code == 2 and str(tmp_path/"cache"/"kb.sqlite") in err
    monkeypatch.setenv("GAIA_MAS_KB", f"sqlite:///{tmp_path/'env.sqlite'}")
    (tmp_path/"a.md").write_text("# A\n\nRate limits.\n")
    assert run(capsys, "rag", "ingest", str(tmp_path/"a.md"), "--embeddings", "hash")[0] == 0 and (tmp_path/"env.sqlite").exists()


def test_parsers_for_ask_and_serve():
    p = argparse.ArgumentParser(prog="gaia-mas"); add_rag_parsers(p.add_subparsers(dest="command", required=True))
    a = p.parse_args(["rag", "ask", "What is a bulkhead?", "--pattern", "parallel", "--session-id", "s1", "--provider", "scripted"])
    assert (a.question, a.pattern, a.session_id, a.provider, a.func.__name__) == ("What is a bulkhead?", "parallel", "s1", "scripted", "cmd_rag_ask")
    s = p.parse_args(["serve", "--port", "0", "--api-key", "k", "--workers", "2"])
    assert (s.host, s.port, s.api_key, s.workers, s.func.__name__) == ("127.0.0.1", 0, "k", 2, "cmd_serve")
    o = serve_options(p.parse_args(["serve", "--api-key", "s3cret", "--allowed-host", "rag.lan"]), workers=3)
    assert (o.api_key, o.workers, o.allowed_hosts, serve_options(s).workers) == ("s3cret", 3, ("rag.lan",), 2)
    assert "s3cret" not in repr(o), "the key shows in the options' repr"


def test_filter_and_meta_syntax():
    assert parse_filters(["year>=2022", "year<=2024", "team=sre,payments", "source^=/srv/docs"]) == \
        {"year": {"gte": 2022, "lte": 2024}, "team": ["sre", "payments"], "source": {"prefix": "/srv/docs"}}
    assert parse_meta(["year=2024", "tags=a,b", "team=sre"]) == {"year": 2024, "tags": ["a", "b"], "team": "sre"}


@pytest.mark.subprocess
def test_cli_module_is_light():
    code = "import sys, gaia_mas.rag.cli; heavy = [m for m in ('langchain_core', 'sqlite_vec', 'psycopg', 'gaia_mas.rag.kb.api') if m in sys.modules]; print(heavy)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


@pytest.mark.subprocess
def test_through_gaia_mas_main(tmp_path):
    "The real entry point: gaia-mas's own parser carries the rag commands."
    code = "import sys; from gaia_mas.cli import main; sys.exit(main())"
    missing = tmp_path/"missing.sqlite"
    p = subprocess.run([sys.executable, "-c", code, "rag", "stats", "--kb", f"sqlite:///{missing}"], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "OPIK_TRACK_DISABLE": "true"})
    if "invalid choice: 'rag'" in p.stderr: pytest.skip("gaia-mas's parser does not add the rag commands yet")
    assert p.returncode == 2 and f"no knowledge base at {missing}" in p.stderr and "gaia-mas rag ingest" in p.stderr


def test_ask_json_carries_citations_a_reader_can_follow(built, capsys):
    "`rag ask --json`: each citation with its source, section and character span in the document (SQLite and PostgreSQL)."
    code, out, err = run(capsys, "rag", "ask", "What is a circuit breaker?", "--provider", "scripted", "--kb", built,
                         "--pattern", "sequential", "--json")
    assert code == 0, err
    r = json.loads(out)
    d = r["citation_details"][0]
    assert d["citation"] in r["citations"] and d["source"].endswith(".md") and d["section"] and d["end"] > d["start"] >= 0


@pytest.fixture
def sample_sqlite(tmp_path, capsys, monkeypatch):
    "The sample collection in a SQLite knowledge base of the test's own, text and hash vectors."
    monkeypatch.delenv("GAIA_MAS_KB", raising=False)
    url = f"sqlite:///{tmp_path/'kb.sqlite'}"
    assert run(capsys, "rag", "ingest", str(sample_dir()/"docs"), "--kb", url, "--embeddings", "hash")[0] == 0
    return url


def test_ask_without_session_id_starts_fresh_each_run(sample_sqlite, capsys, tmp_path):
    "Two runs of `rag ask` are two conversations; `--session-id` makes them one, kept beside the knowledge base."
    ask = ("rag", "ask", "--kb", sample_sqlite, "--provider", "scripted", "--pattern", "sequential", "--json")
    assert run(capsys, *ask, "What is a circuit breaker?")[0] == 0
    code, out, err = run(capsys, *ask, "How does it work?")
    assert code == 0 and json.loads(out)["metadata"]["history"]["turns_kept"] == 0, out
    assert not (tmp_path/"sessions.sqlite").exists(), "a run without --session-id kept its conversation"
    run(capsys, *ask, "What is a circuit breaker?", "--session-id", "mine")
    code, out, err = run(capsys, *ask, "How does it recover?", "--session-id", "mine")
    r = json.loads(out)
    assert r["metadata"]["history"]["turns_kept"] == 1 and "circuit breaker" in r["metadata"]["standalone_question"].lower()
    assert (tmp_path/"sessions.sqlite").exists()


HEAVY = ("gaia_mas.rag.workflows.patterns", "gaia_mas.rag.workflows.agents", "gaia_mas.rag.workflows.system", "gaia_mas.core.llm", "langgraph",
         "langchain_openai", "openai")


@pytest.mark.subprocess
@pytest.mark.parametrize("cmd", [("ingest", "{docs}/idempotency.md"), ("search", "idempotency", "--mode", "keyword"),
                                 ("stats",), ("rm", "{docs}/idempotency.md")], ids=lambda c: c[0])
def test_kb_commands_load_no_workflow_agent_or_llm_module(tmp_path, cmd):
    "`rag ingest|search|stats|rm` run in a process of their own import nothing of the workflows, agents or LLM layer."
    code = ("import json, sys; from gaia_mas.cli import main; rc = main(sys.argv[1:]); "
            f"print(json.dumps([rc, [m for m in {HEAVY!r} if m in sys.modules]]))")
    kb = f"sqlite:///{tmp_path/'kb.sqlite'}"
    env = {**os.environ, "OPIK_TRACK_DISABLE": "true", "HOME": str(tmp_path)}
    if cmd[0] != "ingest":  # a knowledge base to read
        subprocess.run([sys.executable, "-c", code, "rag", "ingest", str(sample_dir()/"docs"/"idempotency.md"), "--kb",
                        kb, "--no-embed"], capture_output=True, timeout=120, env=env, check=True)
    argv = [c.format(docs=sample_dir()/"docs") for c in cmd]
    p = subprocess.run([sys.executable, "-c", code, "rag", *argv, "--kb", kb], capture_output=True, text=True,
                       timeout=120, env=env)
    rc, loaded = json.loads(p.stdout.splitlines()[-1])
    assert rc == 0 and loaded == [], (p.stdout, p.stderr)


MODEL_CODE = ("numpy", "langchain_core", "gaia_mas.rag.kb.embeddings")


@pytest.mark.subprocess
def test_keyword_search_as_a_new_user_types_it_loads_no_model_code(tmp_path):
    "After `rag ingest` on the defaults (the built-in embedder), a keyword search reads SQLite only: no embedder, no "
    "LangChain, no NumPy (the vector extension's package would load it)."
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LANG": "C.UTF-8", "OPIK_TRACK_DISABLE": "true"}
    gaia = Path(sys.executable).parent/"gaia-mas"
    subprocess.run([gaia, "rag", "ingest", str(sample_dir()/"docs")], capture_output=True, timeout=600, env=env,
                   check=True)
    code = ("import json, sys; from gaia_mas.cli import main; rc = main(sys.argv[1:]); "
            f"print(json.dumps([rc, [m for m in {MODEL_CODE!r} if m in sys.modules]]))")
    p = subprocess.run([sys.executable, "-c", code, "rag", "search", "circuit breaker", "--mode", "keyword"],
                       capture_output=True, text=True, timeout=120, env=env)
    assert "circuit-breakers.md" in p.stdout, (p.stdout[-2000:], p.stderr[-2000:])
    assert json.loads(p.stdout.splitlines()[-1]) == [0, []], (p.stdout[-2000:], p.stderr[-2000:])


def test_search_prints_code_with_its_indentation(tmp_path, capsys):
    url = f"sqlite:///{tmp_path/'kb.sqlite'}"
    code_md = sample_dir().parent/"code"/"inventory.md"
    assert run(capsys, "rag", "ingest", str(code_md), "--kb", url, "--no-embed")[0] == 0
    code, out, err = run(capsys, "rag", "search", "def stock_level", "--kb", url, "--mode", "keyword", "--k", "1",
                         "--width", "2000")
    shown = [l[4:] for l in out.splitlines()[1:]]  # each line of the passage is indented by four spaces
    assert code == 0 and "    def stock_level(self, sku):\n        try:" in "\n".join(shown), out


def test_ask_sources_name_the_file_not_a_character_span(sample_sqlite, capsys):
    code, out, err = run(capsys, "rag", "ask", "What is idempotency?", "--kb", sample_sqlite, "--provider",
                         "scripted", "--pattern", "sequential")
    sources = out.split("Sources:\n")[1].split("\n\n")[0].splitlines()
    assert code == 0 and sources, out
    assert all(re.fullmatch(r"  \[\d+\] .+  \(in .+\.(md|html|pdf|docx)\)", s) for s in sources), sources
    assert "characters" not in out


@pytest.mark.process
def test_an_empty_knowledge_base_says_how_to_fill_it(tmp_path, capsys, monkeypatch):
    "`serve` on a fresh HOME makes an empty knowledge base and says so; search, ask and the API then say the same."
    from rag_serve import serve
    import httpx
    home = tmp_path/"home"; home.mkdir()
    env = {"HOME": str(home), "GAIA_MAS_KB": "", "GAIA_MAS_CACHE": "", "XDG_CACHE_HOME": "", "GAIA_MAS_API_KEY": ""}
    with serve(env=env) as (url, proc, lines):
        r = httpx.get(f"{url}/kb/search", params={"q": "circuit breaker"}, timeout=30)
    said = "".join(lines)
    assert f"the chat page at {url}/" in said and "holds no documents yet" in said, said
    assert r.status_code == 200 and "holds no documents yet" in r.json()["warnings"][0] and "--no-embed" not in r.text
    monkeypatch.setenv("HOME", str(home))
    for k in ("GAIA_MAS_KB", "GAIA_MAS_CACHE", "XDG_CACHE_HOME"): monkeypatch.delenv(k, raising=False)
    code, out, err = run(capsys, "rag", "search", "circuit breaker")
    assert code == 1 and "holds no documents yet" in err and "gaia-mas rag ingest PATH" in err and "--no-embed" not in err
    code, out, err = run(capsys, "rag", "ask", "What is a circuit breaker?", "--provider", "scripted")
    assert code == 2 and "holds no documents yet" in err, err


@pytest.mark.subprocess
def test_search_piped_into_head_stops_quietly(sample_sqlite):
    "`gaia-mas rag search ... | head -1`: the first line, and nothing on stderr when head stops reading."
    cmd = f"{sys.executable} -c 'import sys; from gaia_mas.cli import main; sys.exit(main())' rag search breaker " \
          f"--kb {sample_sqlite} --k 50 --width 5000 --mode keyword | head -1"
    p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "OPIK_TRACK_DISABLE": "true"})
    assert p.stdout.startswith("[1] ") and p.stderr == "", p.stderr
