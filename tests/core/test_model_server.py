"""`tls_context`: every outgoing HTTPS client of the package shares one TLS context, so that none reads the CA bundle
again per call (~25 ms of CPU each). Each client calls an HTTPS server on loopback once (its imports may make contexts
of their own, once per process), then three times more without loading a CA bundle. The server's certificate is
trusted only through the user's own CA bundle (`SSL_CERT_FILE`), which the shared context honours."""
import json, ssl
from http.server import BaseHTTPRequestHandler

import pytest

from gaia_mas.core.model_server import server_model, tls_context
from loopback import https_server


class _Api(BaseHTTPRequestHandler):
    "JSON for every client under test: models, embeddings, transcriptions, course questions, anything else."
    def log_message(self, *a): pass

    def _reply(self, body):
        data = json.dumps(body).encode()
        self.send_response(200); self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data))); self.end_headers(); self.wfile.write(data)

    def do_GET(self):
        if self.path.endswith("/models"): return self._reply({"object": "list", "data": [{"id": "fake-model"}]})
        self._reply([] if self.path.endswith("/questions") else {"ok": True})

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.path.endswith("/audio/transcriptions"): return self._reply({"text": "hello over tls"})
        if self.path.endswith("/embeddings"):
            n = len(json.loads(body)["input"])
            data = [{"object": "embedding", "index": i, "embedding": [1.0, 0.0]} for i in range(n)]
            return self._reply({"object": "list", "model": "m", "usage": {"prompt_tokens": 1, "total_tokens": 1}, "data": data})
        self._reply({"ok": True})


@pytest.fixture
def api(tmp_path, monkeypatch):
    "The server's base URL; the environment trusts it through SSL_CERT_FILE, and the shared context is made afresh."
    with https_server(_Api, tmp_path) as (url, ca):
        monkeypatch.setenv("SSL_CERT_FILE", str(ca))
        tls_context.cache_clear(); tls_context()
        yield url
    tls_context.cache_clear()


def _web(url, tmp):
    from gaia_mas.gaia.tools.web_tools import http_json
    return http_json("GET", f"{url}/w/api.php")

def _transcription(url, tmp):
    from gaia_mas.gaia.tools.file_tools import transcribe_audio
    (tmp/"a.mp3").write_bytes(b"ID3 not really audio")
    return transcribe_audio(tmp/"a.mp3")

def _embeddings(url, tmp):
    from gaia_mas.rag.kb.embeddings import ServerEmbeddings
    return ServerEmbeddings("fake-embedder", f"{url}/v1").embed_query("x")

def _course(url, tmp):
    from gaia_mas.gaia.runs.course import fetch_questions
    return fetch_questions(url)

def _chat_model(url, tmp):
    from gaia_mas.core.openai_chat import openai_llm_factory
    return type(openai_llm_factory("planner", "fake-model", 0, None, None, base_url=f"{url}/v1")).__name__

def _server_model(url, tmp): return server_model(f"{url}/v1")

CLIENTS = {"web tools' http_json": (_web, {"ok": True}), "transcription": (_transcription, "hello over tls"),
           "ServerEmbeddings": (_embeddings, [1.0, 0.0]), "server_model": (_server_model, "fake-model"),
           "course API": (_course, []), "chat model": (_chat_model, "ServerChatOpenAI")}


@pytest.mark.parametrize("client", CLIENTS)
def test_clients_share_one_tls_context(client, api, tmp_path, monkeypatch):
    call, expected = CLIENTS[client]
    monkeypatch.setenv("OPENAI_BASE_URL", f"{api}/v1"); monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    call(api, tmp_path)  # the imports
    loads = []
    for name in ("load_verify_locations", "set_default_verify_paths"):  # httpx's contexts, urllib's default one
        real = getattr(ssl.SSLContext, name)
        monkeypatch.setattr(ssl.SSLContext, name, lambda ctx, *a, _real=real, **kw: loads.append(1) or _real(ctx, *a, **kw))
    got = [call(api, tmp_path) for _ in range(3)]
    print(f"{client}: 3 calls over TLS, {len(loads)} CA bundles loaded")
    assert all(g == expected or (isinstance(g, str) and str(expected) in g) for g in got), got
    assert loads == [], f"{client} loaded the CA bundle {len(loads)} times in 3 calls: it makes a TLS context per call"
