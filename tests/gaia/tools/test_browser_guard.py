"""The researcher's browser cannot read a loopback service: Playwright's MCP server driving Debian's chromium, started
as `gaia-mas ask` starts it (`LocalBrowser`) and as tools/start_browser_mcp.sh does, against a real server on 127.0.0.1 that holds a secret and lets any page
read it (CORS `*`). The model's address is refused (by number, by `localhost`, by a decimal IP), and a page the model
may open (its host allowed, standing in for a public site) cannot reach the secret by a redirect, a script's `fetch`
or an iframe; a host the user names in GAIA_MAS_BROWSER_ALLOW is opened."""
import contextlib, http.server, os, secrets, signal, socket, subprocess, threading, time
from pathlib import Path
import pytest

from gaia_mas.core.utils import run_sync
from gaia_mas.gaia.tools.browser import LocalBrowser, chromium_path, get_browser_mcp_tools, playwright_mcp_path, reachable

pytestmark = [pytest.mark.security, pytest.mark.browser, pytest.mark.process]  # Playwright's MCP server and chromium
if not (playwright_mcp_path() and chromium_path()) and not os.environ.get("CI"):
    pytest.skip("chromium or @playwright/mcp not installed: run tools/install_system.sh", allow_module_level=True)

SECRET = f"SECRET-{secrets.token_hex(6)}"
ROOT = Path(__file__).resolve().parents[3]


def serve(pages:dict) -> http.server.ThreadingHTTPServer:
    "A loopback server answering `pages[path]` as (status, headers, body); a thread of its own."
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            status, headers, body = pages.get(self.path, (404, {}, "not found"))
            body = body(self.server) if callable(body) else body
            self.send_response(status)
            for k, v in {"Content-Type": "text/html; charset=utf-8", **headers}.items(): self.send_header(k, v)
            self.send_header("Content-Length", str(len(body.encode()))); self.end_headers(); self.wfile.write(body.encode())
        def log_message(self, *a): pass
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return srv


@pytest.fixture(scope="module")
def sites():
    "(the secret's port, the page's port): a loopback service with a secret, and a page that tries to read it."
    vault = serve({"/": (200, {"Access-Control-Allow-Origin": "*"}, f"<html><body><p>{SECRET}</p></body></html>")})
    target = f"http://127.0.0.1:{vault.server_port}/"
    page = serve({
        "/redirect": (302, {"Location": target}, ""),
        "/fetch": (200, {}, "<html><body><p id=out>waiting</p><script>fetch(" + repr(target) + ").then(r => r.text())"
                   ".then(t => out.textContent = 'fetched: ' + t, e => out.textContent = 'fetched: failed')"
                   "</script></body></html>"),
        "/iframe": (200, {}, f"<html><body><p>framed:</p><iframe src='{target}'></iframe></body></html>"),
    })
    yield vault.server_port, page.server_port
    for s in (vault, page): s.shutdown(); s.server_close()


def _free_port() -> int:
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); return s.getsockname()[1]


@contextlib.contextmanager
def script_server():
    "tools/start_browser_mcp.sh on a free port, as someone starts it by hand: its MCP address; stopped at the end."
    port = _free_port()
    proc = subprocess.Popen([str(ROOT/"tools"/"start_browser_mcp.sh"), str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        for _ in range(600):
            if reachable(url, 0.2) or proc.poll() is not None: break
            time.sleep(0.1)
        assert reachable(url), "tools/start_browser_mcp.sh did not start"
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError): os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(20)


@contextlib.contextmanager
def local_server():
    "The server `gaia-mas ask` starts by itself (`LocalBrowser`)."
    b = LocalBrowser(playwright_mcp_path(), chromium_path())
    try: yield b.start(60)
    finally: b.stop()


@pytest.fixture(scope="module", params=["started by gaia-mas", "tools/start_browser_mcp.sh"])
def tools(sites, request):
    "The browser tools of a server; the page's host and `localhost:SECRET_PORT` are allowed by name."
    vault, page = sites
    old = os.environ.get("GAIA_MAS_BROWSER_ALLOW")
    os.environ["GAIA_MAS_BROWSER_ALLOW"] = f"127.0.0.1:{page},localhost:{vault}"
    try:
        with (local_server() if request.param == "started by gaia-mas" else script_server()) as url:
            yield {t.name: t for t in run_sync(get_browser_mcp_tools(url))}
    finally:
        if old is None: os.environ.pop("GAIA_MAS_BROWSER_ALLOW", None)
        else: os.environ["GAIA_MAS_BROWSER_ALLOW"] = old


@pytest.mark.parametrize("host", ["127.0.0.1", "2130706433", "[::ffff:127.0.0.1]", "0.0.0.0", "vault.localhost"])
def test_the_model_cannot_open_a_loopback_address(tools, sites, host):
    out = tools["browser_navigate"].invoke({"url": f"http://{host}:{sites[0]}/"})
    assert out.startswith("Error: the browser does not open") and SECRET not in out, out


@pytest.mark.parametrize("how", ["redirect", "fetch", "iframe"])
def test_a_page_cannot_reach_the_secret(tools, sites, how):
    out = tools["browser_navigate"].invoke({"url": f"http://127.0.0.1:{sites[1]}/{how}"})
    if how == "fetch": out += tools["browser_wait_for"].invoke({"text": "fetched:"})
    out += tools["browser_snapshot"].invoke({})
    assert SECRET not in out, out
    if how == "fetch": assert "fetched: failed" in out, out
    if how == "iframe": assert "framed:" in out, out


def test_a_host_the_user_names_is_opened(tools, sites):
    out = tools["browser_navigate"].invoke({"url": f"http://localhost:{sites[0]}/"})
    assert SECRET in out + tools["browser_snapshot"].invoke({}), out
