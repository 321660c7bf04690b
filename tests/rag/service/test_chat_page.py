"""The chat page in Debian's headless Chromium (Playwright, the system browser: nothing is downloaded), against the real
service on loopback: type a question, see the answer stream in and a citation appear; follow a marker to its citation and open the cited
document at its passage; upload a document; continue.
On a phone (390x844, touch) and a desktop (1280x800) every control is visible, on top at its centre and usable;
the screenshots are kept in tests/out/ (or $GAIA_MAS_CHAT_SCREENSHOT's folder)."""
import os
from pathlib import Path
import pytest

from gaia_mas.core.testing import LiveServer
from gaia_mas.rag.service.app import create_app
from gaia_mas.rag.kb.api import HashEmbeddings, open_kb
from gaia_mas.rag.kb.ingest import ingest, sample_dir
from gaia_mas.rag.workflows.system import make_rag_system

CHROMIUM = "/usr/bin/chromium"
KEY = "page-key"
SHOT = os.environ.get("GAIA_MAS_CHAT_SCREENSHOT")  # where to keep the screenshot; the test's tmp folder if unset
OUT = Path(SHOT).parent if SHOT else Path(__file__).resolve().parents[2]/"out"  # the phone and desktop screenshots
SCREENS = {"phone": {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True},
           "desktop": {"viewport": {"width": 1280, "height": 800}}}
CONTROLS = ["#pattern", "#key", "#new", "#question", "#send", "#files", "#upload"]
pytestmark = [pytest.mark.browser, pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no system chromium at /usr/bin/chromium")]

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    kb = open_kb(tmp_path_factory.mktemp("kb")/"kb.sqlite", HashEmbeddings(), create=True)
    ingest(kb, [sample_dir()/"docs"])
    system = make_rag_system(provider="scripted", latency=0.4, knowledge_base=kb)  # slow enough to watch the words arrive
    with LiveServer(create_app(system, api_key=KEY)) as url: yield url

@pytest.fixture(scope="module")
def browser():
    "One chromium for the module: each test opens its page in a context of its own (cookies, storage, viewport)."
    pw_api = pytest.importorskip("playwright.sync_api")
    with pw_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()

def open_page(browser, server, **context):
    "The chat page in a new context (viewport, touch), the key typed in."
    page = browser.new_context(**(context or {"viewport": {"width": 1280, "height": 900}})).new_page()
    page.goto(server + "/")
    page.fill("#key", KEY); page.dispatch_event("#key", "change")
    return page

@pytest.fixture
def page(browser, server):
    page = open_page(browser, server)
    yield page
    page.context.close()

# Where the control is on screen, and whether it is the element a finger or a pointer at its centre reaches.
REACH = """sel => { const e = document.querySelector(sel); e.scrollIntoView({block: "center"});
  const r = e.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
  const top = document.elementFromPoint(x, y);
  return {visible: r.width > 0 && r.height > 0 && x >= 0 && x <= innerWidth && y >= 0 && y <= innerHeight,
          on_top: !!top && (top === e || e.contains(top)), top: top ? top.id || top.tagName : null, width: r.width}; }"""

def reached(page, sel:str) -> dict:
    where = page.evaluate(REACH, sel)
    assert where["visible"] and where["on_top"], (sel, where)
    return where

def test_question_streams_in_with_citations(page, tmp_path):
    page.select_option("#pattern", "sequential")
    page.fill("#question", "What is a circuit breaker?")
    page.click("#send")
    # seen while the answer is still streaming: some text, not yet done
    page.wait_for_function("() => { const m = document.querySelector('.msg.assistant');"
                           " return m && m.dataset.state === 'streaming' && m.textContent.length > 0; }", timeout=60_000)
    page.wait_for_selector(".msg.assistant[data-state=done]", timeout=60_000)
    answer = page.text_content(".msg.assistant")
    assert "circuit breaker" in answer.lower() and "Error" not in answer
    assert page.evaluate("window.chunks") > 5
    assert page.locator(".citation").count() >= 1
    page.click(".citation summary")
    assert "characters" in page.text_content(".citation dl")
    assert page.locator("#steps li").count() >= 3
    shot = Path(SHOT) if SHOT else tmp_path/"chat_page.png"
    shot.parent.mkdir(parents=True, exist_ok=True); page.screenshot(path=str(shot), full_page=True)

def test_follow_up_continues_the_conversation(page):
    page.select_option("#pattern", "sequential")
    for q in ("What is a circuit breaker?", "How does it recover?"):
        page.fill("#question", q); page.click("#send")
        page.wait_for_function(f"() => document.querySelectorAll('.msg.assistant[data-state=done]').length >= {1 if q.startswith('What') else 2}", timeout=60_000)
    second = page.locator(".msg.assistant").nth(1).text_content().lower()
    assert "half-open" in second or "recover" in second or "close" in second, second

def test_upload_from_the_page(page, tmp_path):
    f = tmp_path/"bulkheads.md"; f.write_text("# Bulkheads\n\n## Idea\n\nA bulkhead isolates each dependency's resources.\n")
    page.set_input_files("#files", str(f)); page.click("#upload")
    page.wait_for_function("() => document.getElementById('upload-status').textContent.includes('chunks')", timeout=30_000)
    assert "uploads/bulkheads.md: added" in page.text_content("#upload-status")

def test_a_wrong_key_shows_the_error(page):
    page.fill("#key", "wrong"); page.fill("#question", "What is a circuit breaker?"); page.click("#send")
    page.wait_for_selector(".msg.assistant.error", timeout=30_000)
    assert "API key" in page.text_content(".msg.assistant.error")


@pytest.mark.parametrize("screen", SCREENS)
def test_every_control_is_reachable_and_usable(browser, server, screen, tmp_path):
    page = open_page(browser, server, **SCREENS[screen])
    press = (lambda sel: page.locator(sel).first.tap(timeout=5000)) if screen == "phone" else \
            (lambda sel: page.locator(sel).first.click(timeout=5000))
    for sel in CONTROLS: reached(page, sel)
    page.select_option("#pattern", "sequential")
    page.fill("#question", "What is a circuit breaker?"); reached(page, "#send"); press("#send")
    page.wait_for_selector(".msg.assistant[data-state=done]", timeout=60_000)
    answer = page.locator(".msg.assistant").first
    assert answer.bounding_box()["width"] > 0.6 * SCREENS[screen]["viewport"]["width"] - 40  # not a word a line
    reached(page, ".citation summary"); press(".citation summary")
    passage = reached(page, ".citation .passage")
    assert passage["width"] > 150 and len(page.locator(".citation .passage").first.text_content()) > 20
    files = [tmp_path/"bulkheads.md", tmp_path/"retries.md"]
    for f in files: f.write_text(f"# {f.stem}\n\n## Idea\n\nA {f.stem} note for the upload test.\n")
    page.set_input_files("#files", [str(f) for f in files]); reached(page, "#upload"); press("#upload")
    page.wait_for_function("() => document.querySelectorAll('#upload-status div').length == 2", timeout=30_000)
    assert [d.text_content().split(":")[0] for d in page.locator("#upload-status div").all()] == \
           ["uploads/bulkheads.md", "uploads/retries.md"]
    OUT.mkdir(parents=True, exist_ok=True)  # the answer, an opened citation with its passage, two uploads
    page.screenshot(path=str(OUT/f"chat_page_{screen}.png"), full_page=True)
    reached(page, "#new"); press("#new")
    assert page.locator(".msg").count() == 0

def test_an_error_clears_the_old_citations_and_says_what_to_do(page):
    page.select_option("#pattern", "sequential")
    page.fill("#question", "What is a circuit breaker?"); page.click("#send")
    page.wait_for_selector(".msg.assistant[data-state=done]", timeout=60_000)
    assert page.locator(".citation").count() >= 1
    page.fill("#key", "wrong"); page.fill("#question", "How does it recover?"); page.click("#send")
    page.wait_for_selector(".msg.assistant.error", timeout=30_000)
    assert page.locator(".citation").count() == 0 and "failed" in page.text_content("#citations")
    shown = page.text_content(".msg.assistant.error")
    assert "API key field" in shown and "Bearer" not in shown, shown


def test_a_marker_leads_to_its_citation_and_the_document_opens_at_it(browser, server):
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(server + "/"); page.fill("#key", KEY); page.dispatch_event("#key", "change")
    page.select_option("#pattern", "sequential")
    page.fill("#question", "What is a circuit breaker?"); page.click("#send")
    page.wait_for_selector(".msg.assistant[data-state=done]", timeout=60_000)
    markers = page.locator(".msg.assistant a.marker")
    assert markers.count() >= 1, page.text_content(".msg.assistant")
    last = markers.nth(markers.count() - 1); label = last.text_content()
    last.click()
    opened = page.locator(".citation[open]")
    assert opened.count() == 1 and opened.locator("summary").text_content().endswith(label)
    passage = opened.locator(".passage").text_content()
    opened.locator(".open-doc").click()
    page.wait_for_selector("#doc-text mark", timeout=30_000)
    mark = page.text_content("#doc-text mark")
    assert mark[:80] == passage[:80] and len(page.text_content("#doc-text")) > len(mark)
    seen = page.evaluate("""() => { const m = document.querySelector('#doc-text mark').getBoundingClientRect(),
        d = document.getElementById('doc').getBoundingClientRect(); return m.top >= d.top && m.top < d.bottom; }""")
    assert seen, "the cited passage is not in view"
    page.click("#doc-close"); assert not page.locator("#doc").is_visible()
    assert not errors, errors


@pytest.mark.security
def test_the_key_lives_in_the_tab_only(browser, server):
    "The key typed in is kept for the tab (sessionStorage): a reload keeps it, a new tab of the same site starts empty."
    page = open_page(browser, server)
    try:
        kept = page.evaluate("[sessionStorage.getItem('gaia_mas_key'), localStorage.getItem('gaia_mas_key')]")
        assert kept == [KEY, None], kept
        page.reload(); assert page.input_value("#key") == KEY
        other = page.context.new_page(); other.goto(server + "/")
        assert other.input_value("#key") == "", "a new tab read the key another tab kept"
    finally: page.context.close()
