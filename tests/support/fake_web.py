"A fake of the web the researcher searches, on a free loopback port: Tavily's /search and Wikipedia's API, with a few facts."
import contextlib, json, os, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

FACTS = {  # page title -> text; a query finds the pages that share a word of four letters or more with it
    "Paris": "Paris is the capital and largest city of France.",
    "Moby-Dick": "Moby-Dick is an 1851 novel by the American writer Herman Melville.",
    "Mount Everest": "Mount Everest, 8,849 metres high, is Earth's highest mountain above sea level.",
}


def matches(query:str) -> list[str]:
    "The titles of the facts that share a word of four letters or more with `query`."
    words = {w.strip("?.,!'\"").lower() for w in query.split()}
    return [t for t, text in FACTS.items() if any(len(w) > 3 and w in f"{t} {text}".lower() for w in words)]


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *a): pass

    def _json(self, body:dict, status:int=200):
        data = json.dumps(body).encode()
        self.send_response(status); self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data))); self.end_headers(); self.wfile.write(data)

    def do_POST(self):  # Tavily
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        if self.path != "/search": return self._json({"error": "not found"}, 404)
        self.server.queries.append(body.get("query", ""))
        found = matches(body.get("query", ""))
        results = [{"title": f"{t} - Wikipedia", "url": f"https://en.wikipedia.org/wiki/{t.replace(' ', '_')}",
                    "content": FACTS[t]} for t in found]
        self._json({"answer": FACTS[found[0]] if found else None, "results": results})

    def do_GET(self):  # Wikipedia
        q = {k: v[0] for k, v in parse_qs(urlparse(self.path).query).items()}
        if "srsearch" in q:
            self.server.queries.append(q["srsearch"])
            return self._json({"query": {"search": [{"title": t} for t in matches(q["srsearch"])]}})
        titles = q.get("titles", "").split("|")
        self._json({"query": {"pages": {str(i): {"title": t, "extract": FACTS.get(t, "")} for i, t in enumerate(titles)}}})


@contextlib.contextmanager
def fake_web():
    "Serve the fake web; yield the environment that points the research tools at it (the server's `queries` list grows)."
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.queries = []
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    try: yield server, {"GAIA_MAS_TAVILY_URL": base, "GAIA_MAS_WIKIPEDIA_API": f"{base}/w/api.php",
                        "TAVILY_API_KEY": "fake-web-key"}
    finally: server.shutdown(); server.server_close()
