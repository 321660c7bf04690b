"""The app notebook in a real browser: JupyterLab on 127.0.0.1, driven by Playwright with Debian's Chromium.

Opens nbs/gaia/29_app.ipynb (a copy, so outputs never land in nbs/) as a new user would: a fresh HOME, no cache
setting, no key. Runs every cell, clicks the runner's Run button and waits for the final answer; then loads a task file
whose task has an attachment, picks that task and runs it through the widget. Screenshots: tests/out/app_run.png (the run) and tests/out/app_graph.png
(the Mermaid diagram with its subgraphs, as JupyterLab draws it).
"""
import json, os, shutil, socket, subprocess, sys, time, urllib.request
from pathlib import Path
import pytest
from cli_support import newcomer_env

pytestmark = [pytest.mark.process, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT/"tests"/"out"
CHROMIUM = os.environ.get("GAIA_MAS_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run"]
# JupyterLab user settings: no news pop-up, and every cell rendered (no windowing) so the page can be searched
SETTINGS = {"@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false"},
            "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"}}

def free_port() -> int:
    "A TCP port on 127.0.0.1 that nothing listens on now."
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); return s.getsockname()[1]

def lab_env(tmp: Path) -> dict:
    "A new user's environment: HOME is tmp/home (empty but for JupyterLab's settings), no cache setting, no API key."
    settings = tmp/"home"/".jupyter"/"lab"/"user-settings"   # where JupyterLab looks in a fresh HOME
    for name, value in SETTINGS.items():
        (settings/name).parent.mkdir(parents=True, exist_ok=True)
        (settings/name).write_text(json.dumps(value))
    import jupyterlab   # the widgets' front end is installed beside JupyterLab, which a borrowing venv may not hold
    shared = Path(jupyterlab.__file__).resolve().parents[4]/"share"/"jupyter"
    return newcomer_env(tmp/"home", JUPYTER_PATH=str(shared))

def start_lab(root: Path, tmp: Path, port: int) -> subprocess.Popen:
    "JupyterLab serving `root` on 127.0.0.1:`port`, token disabled, no browser; returns once it answers."
    args = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ServerApp.open_browser=False",
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0", "--ServerApp.token=",
            "--ServerApp.password=", f"--ServerApp.root_dir={root}", "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.extension_manager=readonly",
            "--LabApp.expose_app_in_browser=True"]
    proc = subprocess.Popen(args, env=lab_env(tmp), stdout=open(tmp/"jupyterlab.log", "w"), stderr=subprocess.STDOUT)
    for _ in range(120):
        if proc.poll() is not None: break
        try: urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=1); return proc
        except OSError: time.sleep(0.5)
    proc.kill(); pytest.fail(f"JupyterLab did not start; see {tmp/'jupyterlab.log'}:\n{(tmp/'jupyterlab.log').read_text()[-2000:]}")

KERNEL_READY = """() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.connectionStatus === 'connected' && k.status === 'idle'; }"""

def check_diagrams(page, shot: Path) -> int:
    "Wait for the Mermaid outputs to be drawn, screenshot the xray one; how many were drawn."
    drawn = page.locator(".jp-RenderedMermaid figure img")  # JupyterLab inlines the SVG as an image
    drawn.nth(1).wait_for(timeout=60_000)
    drawn.nth(1).scroll_into_view_if_needed(); drawn.nth(1).screenshot(path=str(shot))
    return drawn.count()

def run_notebook_and_click(page, url: str, shot: Path) -> str:
    "Open the notebook, run all cells, check the diagrams, click Run, wait for the answer, screenshot; the answer's text."
    page.goto(url)
    page.wait_for_function(KERNEL_READY, timeout=90_000)
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    run = page.locator(".gaia-run").last
    run.wait_for(state="visible", timeout=120_000)
    page.wait_for_function(KERNEL_READY, timeout=120_000)  # every cell has finished
    assert check_diagrams(page, shot.with_name("app_graph.png")) == 2
    run.scroll_into_view_if_needed(); run.click()
    answer = page.locator(".gaia-answer").last
    answer.filter(has_text="Paris").wait_for(timeout=60_000)
    page.locator(".widget-html:has-text('✓ correct')").last.wait_for(timeout=10_000)
    page.locator(".gaia-progress").last.scroll_into_view_if_needed()
    page.screenshot(path=str(shot))
    return answer.inner_text()

def write_attachment_task(folder: Path) -> Path:
    "A task file of one task whose attachment lies beside it; the scripted model's answer, Paris, is its gold."
    folder.mkdir()
    (folder/"notes.txt").write_text("The capital of France is Paris.")
    (folder/"metadata.jsonl").write_text(json.dumps({"task_id": "file-1", "Question": "Which city does the note name?",
                                                     "Level": 1, "Final answer": "Paris", "file_name": "notes.txt"}))
    return folder


def run_attachment_task(page, folder: Path) -> str:
    "Load the task file in the runner, pick its task, check its attachment is filled in, run it; the progress text."
    page.locator(".gaia-tasks input").last.fill(str(folder))
    page.locator(".gaia-load").last.click()
    page.locator(".widget-html:has-text('Loaded 1 tasks')").last.wait_for(timeout=30_000)  # the kernel has the task
    page.locator(".gaia-pick select").last.select_option(index=1)
    from playwright.sync_api import expect
    expect(page.locator(".gaia-file input").last).to_have_value(str(folder/"notes.txt"), timeout=30_000)  # filled in
    page.locator(".gaia-run").last.click()
    progress = page.locator(".gaia-progress").last
    progress.filter(has_text=f"attached file: {folder/'notes.txt'}").wait_for(timeout=30_000)
    page.locator(".gaia-answer").last.filter(has_text="Paris").wait_for(timeout=60_000)
    page.locator(".widget-html:has-text('✓ correct')").last.wait_for(timeout=10_000)
    return progress.inner_text()


def test_app_notebook_runs_in_jupyterlab(tmp_path):
    from playwright.sync_api import sync_playwright
    if not Path(CHROMIUM).exists(): pytest.fail(f"{CHROMIUM} is missing: run tools/install_system.sh")
    t0, port, root = time.monotonic(), free_port(), tmp_path/"nbs"
    root.mkdir(); shutil.copy(ROOT/"nbs"/"gaia"/"29_app.ipynb", root/"29_app.ipynb")
    OUT.mkdir(exist_ok=True); shot = OUT/"app_run.png"
    lab, blocked = start_lab(root, tmp_path, port), []
    def only_loopback(route):
        url = route.request.url
        if url.startswith((f"http://127.0.0.1:{port}/", f"ws://127.0.0.1:{port}/")): return route.continue_()
        blocked.append(url); route.abort()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
            page = browser.new_page(viewport={"width": 1280, "height": 1500})
            page.route("**/*", only_loopback)
            try:
                text = run_notebook_and_click(page, f"http://127.0.0.1:{port}/lab/tree/29_app.ipynb", shot)
                progress = run_attachment_task(page, write_attachment_task(tmp_path/"with_file"))
            except Exception:
                page.screenshot(path=str(OUT/"app_failed.png"), full_page=True); raise   # what the page showed
            browser.close()
    finally:
        lab.terminate(); lab.wait(30)
    print(f"\nscreenshots: {shot} and {shot.with_name('app_graph.png')}\nanswer: {text!r}\nblocked requests: {blocked}\ntook {time.monotonic() - t0:.1f} s")
    assert "Final answer: Paris" in text and "attached file:" in progress
