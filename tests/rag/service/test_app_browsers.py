"""Drive-by browsers against `gaia-mas serve` as a user starts it (a fresh HOME, no key, on loopback): a web page on
another local port or a `file://` page cannot upload, delete or ask (403, nothing changed), a request addressed to a
name that is not this machine's (DNS rebinding) is refused unless the user allowed that name, the service's own chat
page still uploads, and `--host 0.0.0.0` without a key prints a warning. The browser is Debian's chromium, driven by
Playwright; the other tests send what such a page sends, with httpx."""
import contextlib, functools, http.server, os, shutil, subprocess, sys, threading, time
from pathlib import Path
import httpx, pytest

from rag_serve import SERVE, serve

pytestmark = [pytest.mark.process, pytest.mark.security]
CHROMIUM = "/usr/bin/chromium"
DOC = ("evil.md", b"# Evil\n\nThis document was planted by a web page.\n", "text/markdown")


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def server(home):
    "`gaia-mas serve` with no key, on its own empty knowledge base: (base URL, output lines)."
    with serve("--kb", str(home/"kb.sqlite"), env={"HOME": str(home), "GAIA_MAS_API_KEY": ""}) as (url, _, lines):
        yield url, lines


def sources(url:str) -> list[str]:
    return [d["source"] for d in httpx.get(f"{url}/kb/documents", timeout=30).json()["documents"]]


def upload(url:str, name:str="mine.md", **headers) -> httpx.Response:
    return httpx.post(f"{url}/kb/documents", files={"files": (name, b"# Mine\n\nMy own notes.\n", "text/markdown")},
                      headers=headers, timeout=60)


def port_of(url:str) -> str: return url.rsplit(":", 1)[1]


# --- writes from another web origin ------------------------------------------------------------------------------

PAGES = {"another local port": {"Origin": "http://127.0.0.1:9", "Sec-Fetch-Site": "same-site"},
         "a public site": {"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
         "a file:// page": {"Origin": "null", "Sec-Fetch-Site": "cross-site"},
         "an old browser (Origin only)": {"Origin": "http://localhost:9"}}


@pytest.mark.parametrize("page", PAGES)
def test_a_page_elsewhere_cannot_upload_delete_or_ask(server, page):
    url, _ = server
    assert upload(url, "victim.md").status_code in (200, 201)
    headers = PAGES[page]
    r = upload(url, "victim.md", **headers)
    assert r.status_code == 403 and "another web origin" in r.json()["error"], r.text
    r = httpx.delete(f"{url}/kb/documents", params={"source": "uploads/victim.md"}, headers=headers, timeout=30)
    assert r.status_code == 403 and "uploads/victim.md" in sources(url)
    r = httpx.post(f"{url}/multiagent/sequential/chat", json={"question": "What is a circuit breaker?"},
                   headers=headers, timeout=60)
    assert r.status_code == 403
    r = httpx.post(f"{url}/v1/chat/completions", headers=headers, timeout=60,
                   json={"model": "sequential", "messages": [{"role": "user", "content": "What is it?"}]})
    assert r.status_code == 403 and r.json()["error"]["type"] == "permission_error"  # OpenAI's type for a 403


def test_the_services_own_pages_and_clients_outside_a_browser_still_write(server):
    url, _ = server
    same = {"Origin": f"http://127.0.0.1:{port_of(url)}", "Sec-Fetch-Site": "same-origin"}
    assert upload(url, "own-page.md", **same).status_code == 201
    assert upload(url, "curl.md").status_code == 201  # no Origin, no Sec-Fetch-Site: curl, the openai SDK
    assert {"uploads/own-page.md", "uploads/curl.md"} <= set(sources(url))
    r = httpx.get(f"{url}/kb/documents", headers=PAGES["a public site"], timeout=30)
    assert r.status_code == 200  # a read: the page cannot see the answer


def test_with_a_key_the_key_decides(home):
    with serve("--kb", str(home/"keyed.sqlite"), env={"HOME": str(home), "GAIA_MAS_API_KEY": "k-123"}) as (url, _, _l):
        r = upload(url, **PAGES["another local port"])
        assert r.status_code == 401  # refused by the key check, not the origin check
        assert upload(url, **PAGES["another local port"], Authorization="Bearer k-123").status_code == 201


# --- the Host header (DNS rebinding) -------------------------------------------------------------------------------

def test_a_foreign_host_name_is_refused(server):
    url, _ = server
    port = port_of(url)
    for path in ("/kb/documents", "/health", "/"):
        r = httpx.get(f"{url}{path}", headers={"Host": "evil.example"}, timeout=30)
        assert r.status_code == 403 and "--allowed-host" in r.json()["error"], (path, r.text)
    r = httpx.post(f"{url}/kb/documents", headers={"Host": f"evil.example:{port}"}, timeout=30,
                   files={"files": DOC[:2]})
    assert r.status_code == 403 and "uploads/evil.md" not in sources(url)
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", "localhost", f"app.localhost:{port}"):
        assert httpx.get(f"{url}/kb/documents", headers={"Host": host}, timeout=30).status_code == 200, host


@pytest.mark.parametrize("how", ["flag", "env"])
def test_a_name_the_user_allows_is_answered(home, how):
    args, env = (["--allowed-host", "rag.lan"], {}) if how == "flag" else ([], {"GAIA_MAS_ALLOWED_HOSTS": "rag.lan, x.lan"})
    with serve("--kb", str(home/f"allowed-{how}.sqlite"), *args,
               env={"HOME": str(home), "GAIA_MAS_API_KEY": "", **env}) as (url, _, _l):
        port = port_of(url)
        assert httpx.get(f"{url}/kb/documents", headers={"Host": f"rag.lan:{port}"}, timeout=30).status_code == 200
        assert httpx.get(f"{url}/kb/documents", headers={"Host": f"evil.example:{port}"}, timeout=30).status_code == 403


# --- --host beyond loopback without a key --------------------------------------------------------------------------

def _netns_problem() -> str | None:
    if not shutil.which("unshare"): return "no unshare(1)"
    r = subprocess.run(["unshare", "-rn", "true"], capture_output=True)
    return None if r.returncode == 0 else f"no user and network namespaces here: {r.stderr.decode()[:200]}"


@pytest.mark.parametrize("key, consent", [("", False), ("", True), ("k-123", False)])
def test_listening_beyond_loopback_without_a_key_needs_consent(tmp_path, key, consent):
    """In a network namespace of its own (only its loopback exists), `serve --host 0.0.0.0` with no key refuses to start
    in one line naming the way on; with `--allow-keyless` it starts and says what it exposes; with a key it just starts."""
    if why := _netns_problem(): pytest.skip(why)
    cmd = ["unshare", "-rn", "sh", "-c", 'ip link set lo up 2>/dev/null; exec "$@"', "sh", *SERVE, "--provider",
           "scripted", "--kb", str(tmp_path/"kb.sqlite"), "--host", "0.0.0.0", "--port", "8000",
           *(["--allow-keyless"] if consent else [])]
    env = {**os.environ, "HOME": str(tmp_path), "GAIA_MAS_API_KEY": key, "OPIK_TRACK_DISABLE": "true"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            start_new_session=True)
    out, watchdog = [], threading.Timer(180, os.killpg, (proc.pid, 9))  # a server that never says it started fails
    watchdog.start()
    try:
        for line in proc.stdout:
            out.append(line)
            if "gaia-mas serve: the chat page at http://" in line: break
    finally:
        watchdog.cancel()
        with contextlib.suppress(ProcessLookupError): os.killpg(proc.pid, 15)
        proc.wait(30)
    if key == "" and not consent:
        refused = [l for l in out if "--allow-keyless" in l and "GAIA_MAS_API_KEY" in l]
        assert proc.returncode == 2 and len(refused) == 1 and "Traceback" not in "".join(out), out
        assert not any("the chat page at" in l for l in out), out
        return
    warned = [l for l in out if "warning: listening on 0.0.0.0:8000 with no API key" in l]
    assert (len(warned) == 1) == (key == ""), "".join(out)
    if warned: assert "GAIA_MAS_API_KEY" in warned[0] and "127.0.0.1" in warned[0]


# --- a real browser -----------------------------------------------------------------------------------------------

ATTACK = """<!doctype html><html><body><script>
async function attack() {
  const fd = new FormData();
  fd.append("files", new Blob([%(doc)r], {type: "text/markdown"}), "evil.md");
  try { await fetch("%(target)s/kb/documents", {method: "POST", mode: "no-cors", body: fd}); } catch (e) {}
  document.title = "sent";
}
attack();
</script></body></html>"""


@contextlib.contextmanager
def static_site(folder:Path):
    "A plain HTTP server on another loopback port, serving `folder`."
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try: yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally: httpd.shutdown(); httpd.server_close()


@pytest.fixture(scope="module")
def browser():
    "One chromium for the module; each test opens its pages in a context of its own."
    if not Path(CHROMIUM).exists(): pytest.skip("no system chromium at /usr/bin/chromium")
    pw_api = pytest.importorskip("playwright.sync_api")
    with pw_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def _sent_to(lines:list, n_before:int) -> list[str]:
    "The access-log lines of uploads the server received since line `n_before`."
    time.sleep(0.5)
    return [l for l in lines[n_before:] if '"POST /kb/documents' in l]


@pytest.mark.browser
@pytest.mark.parametrize("where", ["another local port", "a file:// page"])
def test_chromium_page_elsewhere_cannot_plant_a_document(server, browser, tmp_path, where):
    url, lines = server
    page_file = tmp_path/"attack.html"
    page_file.write_text(ATTACK % {"doc": DOC[1].decode(), "target": url})
    n, page = len(lines), browser.new_page()
    with static_site(tmp_path) as site:
        page.goto(f"{site}/attack.html" if where == "another local port" else page_file.as_uri())
        page.wait_for_function("() => document.title === 'sent'", timeout=30_000)
    received = _sent_to(lines, n)
    assert received and all(" 403" in l for l in received), "".join(lines[n:])  # it arrived, and was refused
    assert "uploads/evil.md" not in sources(url)


@pytest.mark.browser
def test_chromium_chat_page_still_uploads_without_a_key(server, browser, tmp_path):
    url, _ = server
    f = tmp_path/"page-upload.md"; f.write_text("# Page upload\n\nUploaded from the chat page.\n")
    page = browser.new_page()
    page.goto(url + "/")
    page.set_input_files("#files", str(f)); page.click("#upload")
    page.wait_for_function("() => document.getElementById('upload-status').textContent.includes('chunks')",
                           timeout=30_000)
    assert "uploads/page-upload.md: added" in page.text_content("#upload-status")
