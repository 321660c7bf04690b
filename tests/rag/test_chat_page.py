"""The chat page in Debian's headless Chromium (Playwright, the system browser: nothing is downloaded), against the real
service on loopback: type a question, see the answer stream in and a citation appear; upload a document; continue."""
import os
from pathlib import Path
import pytest

from gaia_mas.core.testing import LiveServer
from gaia_mas.rag.service import create_app
from gaia_mas.rag.kb import HashEmbeddings, open_kb
from gaia_mas.rag.ingest import ingest, sample_dir
from gaia_mas.rag.system import make_rag_system

CHROMIUM = "/usr/bin/chromium"
KEY = "page-key"
SHOT = os.environ.get("GAIA_MAS_CHAT_SCREENSHOT")  # where to keep the screenshot; the test's tmp folder if unset
pytestmark = [pytest.mark.browser, pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no system chromium at /usr/bin/chromium")]

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    kb = open_kb(tmp_path_factory.mktemp("kb")/"kb.sqlite", HashEmbeddings(), create=True)
    ingest(kb, [sample_dir()/"docs"])
    system = make_rag_system(provider="scripted", latency=0.4, knowledge_base=kb)  # slow enough to watch the words arrive
    with LiveServer(create_app(system, api_key=KEY)) as url: yield url

@pytest.fixture
def page(server):
    pw_api = pytest.importorskip("playwright.sync_api")
    with pw_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(server + "/")
        page.fill("#key", KEY); page.dispatch_event("#key", "change")
        yield page
        browser.close()

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
