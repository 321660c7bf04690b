"""The docs site in a real browser: `make docs`'s build (tools/docs.py) served on 127.0.0.1, read with Playwright and
Debian's chromium.

Builds the site once for the module, as `make docs` does, from the notebooks `make test`'s notebook step ran and kept
in _build/nbs/ (running only those it finds missing or older than the notebook or the package's code), or reads the site
GAIA_MAS_DOCS_SITE names. Then it checks what a reader sees: the index opens with the GAIA graph drawn (an SVG made at
build time), every link between pages resolves, the search finds a function's page, an API entry shows its parameters
with their descriptions, and no page asks for anything beyond the local server. Every page, read at 1280 and at 390 px,
shows no Markdown link syntax as text, no Mermaid source as text, and is no wider than the screen; the guides come
before the reference in the sidebar, and the search ranks a guide's prose above a notebook's test code.
"""
import functools, http.server, os, re, subprocess, sys, threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit
import pytest

# the build runs every notebook: minutes on a busy machine (the timeout applies where pytest-timeout is installed)
# one xdist worker for the module (`make test` runs `--dist loadfile`): one build of the site, not two racing in _build/
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(3600), pytest.mark.xdist_group("docs_site")]

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT/"_docs"
CHROMIUM = os.environ.get("GAIA_MAS_CHROMIUM", "/usr/bin/chromium")

_BUILT: list = []  # the site this process built

@pytest.fixture(scope="module")
def site() -> Path:
    """The site, built by tools/docs.py (what `make docs` runs) from the executed notebooks of `make test`'s notebook
    step, the notebooks it lacks run now; GAIA_MAS_DOCS_SITE=_docs checks one built already."""
    if os.environ.get("GAIA_MAS_DOCS_SITE"): return Path(os.environ["GAIA_MAS_DOCS_SITE"]).resolve()
    if _BUILT: return _BUILT[0]   # a pytest-xdist worker may tear module fixtures down between tests: build once
    r = subprocess.run([sys.executable, str(ROOT/"tools"/"docs.py"), "--reuse"], cwd=ROOT, capture_output=True, text=True,
                       timeout=3000)
    assert r.returncode == 0, f"make docs failed:\n{(r.stdout + r.stderr)[-5000:]}"
    assert (SITE/"index.html").exists()
    _BUILT.append(SITE)
    return SITE

@pytest.fixture(scope="module")
def base(site):
    "The URL of the site, served from `site` on a free loopback port."
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a: None
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/"
    srv.shutdown(); srv.server_close()

@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()

@pytest.fixture
def page(browser, base):
    "A page whose requests beyond the local server are blocked and counted; the test fails if there was one."
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    outside = []
    def guard(route):
        if route.request.url.startswith((base, "data:", "blob:", "file://")): return route.continue_()
        outside.append(route.request.url); route.abort()
    ctx.route("**/*", guard)
    pg = ctx.new_page()
    yield pg
    ctx.close()
    assert not outside, f"pages asked for something beyond the local server: {outside[:10]}"

def test_index_draws_the_gaia_graph(page, base, site):
    page.goto(base + "index.html")
    assert "gaia_mas" in page.title()
    graph = page.locator("img.mermaid-svg").first
    graph.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=graph.element_handle())
    src = graph.get_attribute("src")
    assert src.endswith(".svg")
    svg = (site/urlsplit(urljoin(base + "index.html", src)).path.lstrip("/")).read_text()
    assert svg.lstrip().startswith("<svg") and "orchestrator" in svg and "finalizer" in svg
    # the sidebar groups the pages by part
    nav = page.locator(".md-nav--primary").inner_text()
    for part in ("Foundation", "GAIA system", "RAG system"): assert part in nav

class _Links(HTMLParser):
    "The hrefs and srcs of a page, and its element ids."
    def __init__(self):
        super().__init__(); self.links, self.ids = [], set()
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"): self.ids.add(a["id"])
        for k in ("href", "src"):
            if a.get(k) and not (tag == "link" and a.get("rel") in ("canonical",)): self.links.append(a[k])

@functools.cache
def _parse(path:Path) -> _Links:
    p = _Links(); p.feed(path.read_text(encoding="utf-8")); return p

def test_every_internal_link_resolves(site):
    pages = sorted(site.rglob("*.html"))
    assert len(pages) >= 60
    broken = []
    for page in pages:
        url = "http://site/" + page.relative_to(site).as_posix()
        for link in _parse(page).links:
            target = urljoin(url, link)
            if not target.startswith("http://site/"): continue   # another site: a link, never loaded by the page
            parts = urlsplit(target)
            path = site/unquote(parts.path.lstrip("/"))
            if path.is_dir(): path = path/"index.html"
            if not path.exists(): broken.append(f"{page.relative_to(site)}: {link}")
            elif parts.fragment and path.suffix == ".html" and unquote(parts.fragment) not in _parse(path).ids:
                broken.append(f"{page.relative_to(site)}: {link} (no such anchor)")
    assert not broken, f"{len(broken)} broken links:\n" + "\n".join(broken[:40])

def test_search_finds_a_function(page, base):
    page.goto(base + "index.html")
    page.locator("label.md-search__icon, .md-search__input").first.click()
    page.locator("input.md-search__input").fill("open_kb")
    hit = page.locator(".md-search-result__item a[href*='rag/kb/api.html']").first
    hit.wait_for(timeout=90_000)   # the search worker builds its index first: slow on a busy machine
    hit.click()
    page.wait_for_url(re.compile(r"rag/kb/api\.html"))

def test_api_entry_shows_its_parameters(page, base):
    page.goto(base + "gaia/agents/graph.html")
    entry = page.locator("h3", has_text=re.compile(r"^\s*answer_question")).first
    entry.wait_for()
    sig = entry.locator("xpath=following::pre[1]").inner_text()
    assert "question:str, # the question" in sig
    assert "thread_id:Optional[str]=None, # checkpointer thread" in sig
    doc = entry.locator("xpath=following::p[1]").inner_text()
    assert "final state" in doc
    page.set_viewport_size({"width": 390, "height": 844})   # on a phone the signature wraps: nothing cut off or hidden
    pre = entry.locator("xpath=following::pre[1]")
    assert pre.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), pre.evaluate("e => [e.scrollWidth, e.clientWidth]")

def test_no_page_asks_the_network(page, base, site):
    "Every page loads with nothing from beyond the local server (the `page` fixture fails the test otherwise)."
    for p in sorted(site.rglob("*.html")):
        page.goto(base + p.relative_to(site).as_posix(), wait_until="load")


# Markdown that was not rendered: a link's syntax, or a Mermaid diagram's source, left as text on the page
RAW_LINK = re.compile(r"\[[^\]\n]{1,80}\]\([^)\s]{1,200}\)")
RAW_MERMAID = re.compile(r"^\s*(?:graph|flowchart) (?:TD|TB|LR|RL|BT)\b|^\s*classDef \w+ |^\s*-{3}\s*config:", re.M)
# the page's text outside code: the article with its code blocks taken out (their text is code, as written)
PROSE = """() => { const a = document.querySelector("article").cloneNode(true);
  a.querySelectorAll("pre, code, .jp-InputArea-editor").forEach(e => e.remove()); return a.textContent; }"""

def page_problems(pg, url:str, width:int) -> list[str]:
    "What is wrong with one page at one width: raw link syntax, raw Mermaid text, wider than the screen."
    pg.goto(url, wait_until="load")
    text, problems = pg.evaluate(PROSE), []
    if m := RAW_LINK.search(text): problems.append(f"raw link {m.group(0)!r}")
    if m := RAW_MERMAID.search(text): problems.append(f"raw Mermaid {m.group(0).strip()!r}")
    wide = pg.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    if wide[0] > wide[1] + 1: problems.append(f"{wide[0]} px wide at {width} px")
    return problems

def test_every_page_reads_at_1280_and_390(browser, base, site):
    "Every page at a desktop's and a phone's width: no raw link, no raw Mermaid, nothing wider than the screen."
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html") if p.name != "404.html")
    bad = {}
    for width in (1280, 390):
        ctx = browser.new_context(viewport={"width": width, "height": 900})
        ctx.route("**/*", lambda route: route.continue_() if route.request.url.startswith((base, "data:")) else route.abort())
        pg = ctx.new_page()
        for rel in pages:
            if probs := page_problems(pg, base + rel, width): bad[f"{rel} at {width} px"] = probs
        ctx.close()
    print(f"\n{len(pages)} pages read at 1280 and 390 px: {len(bad)} page views with a problem")
    assert not bad, "\n".join(f"{k}: {'; '.join(v)}" for k, v in list(bad.items())[:40])

def test_guides_come_before_the_reference(page, base):
    page.goto(base + "index.html")
    nav = page.locator(".md-nav--primary").inner_text()
    assert "Guides" in nav and nav.index("Guides") < nav.index("Foundation"), nav[:400]

def test_search_ranks_prose_above_test_code(page, base):
    "The first hits for a phrase the notebooks' tests use a lot are prose and examples, none of them a test."
    page.goto(base + "index.html")
    page.locator("label.md-search__icon, .md-search__input").first.click()
    page.locator("input.md-search__input").fill("circuit breaker")
    page.locator(".md-search-result__item").first.wait_for(timeout=90_000)
    hits = page.locator(".md-search-result__item").all_inner_texts()[:5]
    code = [h for h in hits if re.search(r"\btest_(eq|fail|close|is|ne)\(|^\s*assert ", h, re.M)]
    assert not code, f"test code among the first search hits: {code}"
