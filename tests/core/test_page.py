"""Every HTML page the project writes, in Debian's headless Chromium at a phone's size (390x844, touch) and a desktop's
(1280x800): the GAIA run report (`gaia-mas report --html`), the retrieval evaluation (`gaia-mas rag eval --html`) and
the chat page the service serves (with an answer and an opened citation, then the cited document). Each must not scroll sideways, keep every
table row under 240 px and keep every chart inside the window, its labels apart. With $GAIA_MAS_PAGE_SHOTS set, the
screenshots are kept in that folder (report_phone.png, eval_desktop.png, chat_phone.png, ...)."""
import os
from pathlib import Path
import pytest

from gaia_mas.core.testing import LiveServer
from gaia_mas.core.utils import run_sync
from gaia_mas.gaia.runs.report import build_report, report_html
from gaia_mas.rag.workflows.eval import answer_all, eval_html, evaluate, scripted_judge
from gaia_mas.rag.kb.ingest import ingest, sample_dir
from gaia_mas.rag.kb.api import HashEmbeddings, open_kb
from gaia_mas.rag.service.app import create_app
from gaia_mas.rag.workflows.system import make_rag_system

CHROMIUM = "/usr/bin/chromium"
KEY = "page-key"
SCREENS = {"phone": {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True},
           "desktop": {"viewport": {"width": 1280, "height": 800}}}
SHOTS = os.environ.get("GAIA_MAS_PAGE_SHOTS")
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no system chromium at /usr/bin/chromium")]

QUESTIONS = ["What is the capital of France, the country whose flag is blue, white and red?",
             "How many studio albums did the band release between 2000 and 2009, counting only the ones on its website?",
             "Which letter comes after b?", "What is 999 plus one, written with a thousands separator?",
             "Name the river that flows through the city where the 1900 Summer Olympics were held.",
             "What is the surname of the first person to walk on the Moon?"]


def _records(answers:dict, cost:float) -> list[dict]:
    "Three repeats of six tasks, with tokens, times, paths and the occasional failure."
    path = {"agents": ["planner", "web_researcher", "reasoner", "critic", "finalizer"], "critic_rejections": 1,
            "tool_calls": 6}
    return [dict(task_id=f"task-{i:02d}-{'x' * 30}", repeat=r, model_answer=answers.get(i, "Paris"), status="ok",
                 input_tokens=12_345, output_tokens=678, wall_time_s=12.5 + r, model="gpt-4o-mini", path=path,
                 cost_usd=cost) for i in range(len(QUESTIONS)) for r in range(3)]


@pytest.fixture(scope="module")
def report_file(tmp_path_factory) -> Path:
    "Two runs side by side, of one accuracy and cost: their points sit at one place."
    tasks = [{"task_id": f"task-{i:02d}-{'x' * 30}", "gold": "Paris", "level": 1 + i % 3, "question": q}
             for i, q in enumerate(QUESTIONS)]
    reps = [build_report(_records({1: "fourteen studio albums, as listed on the website", 2: "c"}, 0.0031), tasks),
            build_report(_records({3: "1,000", 4: "the Seine"}, 0.0030), tasks)]
    f = tmp_path_factory.mktemp("report")/"report.html"
    f.write_text(report_html(reps, ["results-before.jsonl", "results-after.jsonl"]), encoding="utf-8")
    return f


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    kb = open_kb(tmp_path_factory.mktemp("kb")/"kb.sqlite", HashEmbeddings(), create=True)
    ingest(kb, [sample_dir()/"docs"])
    return kb


@pytest.fixture(scope="module")
def eval_file(kb, tmp_path_factory) -> Path:
    "The evaluation of the sample collection in three modes, eight questions answered and judged."
    report = evaluate(kb, sample_dir()/"golden.jsonl")
    report = {**report, "questions": report["questions"][:8]}
    system = make_rag_system(provider="scripted", knowledge_base=kb)
    report = run_sync(answer_all(report, system, "sequential", scripted_judge()))
    f = tmp_path_factory.mktemp("eval")/"eval.html"
    f.write_text(eval_html(report), encoding="utf-8")
    return f


@pytest.fixture(scope="module")
def server(kb):
    with LiveServer(create_app(make_rag_system(provider="scripted", knowledge_base=kb), api_key=KEY)) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    pw_api = pytest.importorskip("playwright.sync_api")
    with pw_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


# What a reader of the page meets: sideways scrolling, rows taller than 240 px, chart parts outside the window or
# outside their chart's box (cut), and labels of one chart drawn over each other.
# W is the screen's width: a phone's browser widens its window (innerWidth) to a page that is too wide.
MEASURE = """W => {
  const out = {width: Math.max(document.documentElement.scrollWidth, innerWidth), window: W, tall: [], outside: [],
               overlaps: []};
  for (const tr of document.querySelectorAll("tr")) {
    const h = tr.getBoundingClientRect().height; if (h > 240) out.tall.push([tr.textContent.slice(0, 40), h]);
  }
  document.querySelectorAll("svg").forEach((svg, i) => {
    const box = svg.getBoundingClientRect();
    const labels = [...svg.querySelectorAll("text")].map(t => [t.textContent, t.getBoundingClientRect()]);
    for (const el of svg.querySelectorAll("text, rect, circle, path")) {
      const r = el.getBoundingClientRect();
      if (r.left < -1 || r.right > W + 1 || r.right > box.right + 1 || r.left < box.left - 1)
        out.outside.push([i, el.tagName, el.textContent.slice(0, 30), Math.round(r.left), Math.round(r.right)]);
    }
    for (let a = 0; a < labels.length; a++) for (let b = a + 1; b < labels.length; b++) {
      const [p, q] = [labels[a][1], labels[b][1]];
      if (p.left < q.right - 1 && q.left < p.right - 1 && p.top < q.bottom - 1 && q.top < p.bottom - 1)
        out.overlaps.push([i, labels[a][0], labels[b][0]]);
    }
  });
  return out;
}"""


def check(page, name:str, screen:str) -> dict:
    "The page's measures (the screenshot kept first when asked), asserting that it reads on this screen."
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS)/f"{name}_{screen}.png"), full_page=True)
    m = page.evaluate(MEASURE, SCREENS[screen]["viewport"]["width"])
    assert m["width"] <= m["window"], f"{name} on a {screen}: the page is {m['width']} px wide in {m['window']} px"
    assert not m["tall"], f"{name} on a {screen}: rows taller than 240 px: {m['tall'][:5]}"
    assert not m["outside"], f"{name} on a {screen}: chart parts past the window or their chart: {m['outside'][:5]}"
    assert not m["overlaps"], f"{name} on a {screen}: chart labels drawn over each other: {m['overlaps'][:5]}"
    return m


@pytest.mark.parametrize("screen", SCREENS)
def test_the_run_report_reads_on_every_screen(browser, report_file, screen):
    page = browser.new_context(**SCREENS[screen]).new_page()
    page.goto(report_file.as_uri())
    assert page.locator("svg").count() == 2 and page.locator("table").count() >= 3
    check(page, "report", screen)


@pytest.mark.parametrize("screen", SCREENS)
def test_the_eval_page_reads_on_every_screen(browser, eval_file, screen):
    page = browser.new_context(**SCREENS[screen]).new_page()
    page.goto(eval_file.as_uri())
    assert page.locator("svg").count() == 1 and "cites" in page.text_content("body")
    check(page, "eval", screen)


@pytest.mark.parametrize("screen", SCREENS)
def test_the_chat_page_reads_on_every_screen(browser, server, screen):
    page = browser.new_context(**SCREENS[screen]).new_page()
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(server + "/")
    page.fill("#key", KEY); page.dispatch_event("#key", "change")
    page.select_option("#pattern", "sequential")
    page.fill("#question", "What is a circuit breaker?"); page.click("#send")
    page.wait_for_selector(".msg.assistant[data-state=done]", timeout=60_000)
    page.locator(".citation summary").first.click()
    page.locator(".citation .passage").first.scroll_into_view_if_needed()
    check(page, "chat", screen)
    top = lambda sel: page.locator(sel).first.bounding_box()["y"]
    if screen == "phone":  # one column: the answer, its citations, then the question field, then the steps
        assert top(".msg.assistant") < top("#citations") < top("#question") < top("#steps"), "citations not by the answer"
    page.locator(".citation[open] .open-doc").first.click()
    page.wait_for_selector("#doc-text mark", timeout=30_000)
    box, win = page.locator("#doc").bounding_box(), SCREENS[screen]["viewport"]
    assert box["x"] >= 0 and box["x"] + box["width"] <= win["width"], box
    check(page, "chat_document", screen)
    assert not errors, errors
