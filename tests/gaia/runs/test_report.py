"""`gaia-mas report` as users run it: figures checked by hand with the official scorer, old files, comparison, and the
HTML page in Debian's headless chromium."""
import json, shutil
from pathlib import Path
import pytest
from cli_support import FIXTURE, dry, gaia  # noqa: F401 (dry is a fixture)
from gaia_mas.gaia.runs.scoring import question_scorer

pytestmark = pytest.mark.subprocess

KEYS = ["accuracy", "by_level", "repeats", "pass_at_k", "pass_all_k", "tokens", "cost_usd", "time", "failures", "questions",
        "overall", "llm_calls", "agreement", "attempts", "votes", "without_attachment"]
GOLD = {"a": ("Paris", 1), "b": ("1,234", 1), "c": ("3.5", 2), "d": ("red; blue", 3)}
ANSWERS = {  # (task, repeat): (answer, status, input tokens, output tokens, seconds)
    ("a", 0): ("paris", "ok", 1000, 100, 2.0), ("a", 1): ("Paris.", "ok", 1200, 120, 3.0),
    ("b", 0): ("1234", "ok", 3000, 50, 10.0), ("b", 1): ("", "timeout", 900, 0, 30.0),
    ("c", 0): ("3.50", "ok", 500, 10, 1.0), ("c", 1): ("$3.5", "ok", 500, 10, 1.5),
    ("d", 0): ("red, blue", "ok", 700, 70, 4.0), ("d", 1): ("", "error", 100, 0, 0.5)}


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def by_hand():
    "The figures computed from the official scorer, one judgement at a time."
    right = {k: s == "ok" and question_scorer(a, GOLD[k[0]][0]) for k, (a, s, *_) in ANSWERS.items()}
    per_repeat = [sum(right[t, r] for t in GOLD) / 4 for r in (0, 1)]
    level1 = [sum(right[t, r] for t in "ab") / 2 for r in (0, 1)]
    times = sorted(x[4] for x in ANSWERS.values())
    p95 = times[6] + (times[7] - times[6]) * (7 * 0.95 - 6)
    n_in, n_out = sum(x[2] for x in ANSWERS.values()), sum(x[3] for x in ANSWERS.values())
    return {"accuracy": sum(per_repeat) / 2, "level1": (sum(level1) / 2, min(level1), max(level1)),
            "pass_at_k": sum(right[t, 0] or right[t, 1] for t in GOLD) / 4, "pass_all_k": sum(right[t, 0] and right[t, 1] for t in GOLD) / 4,
            "tokens": {"input": n_in, "output": n_out, "total": n_in + n_out}, "cost": round((n_in * 0.15 + n_out * 0.60) / 1e6, 6),
            "p50": (times[3] + times[4]) / 2, "p95": round(p95, 3)}


def test_figures_match_a_hand_computation(tmp_path):
    tasks = write(tmp_path/"tasks.jsonl", [{"task_id": t, "Question": f"Q {t}?", "Level": l, "Final answer": g} for t, (g, l) in GOLD.items()])
    recs = [{"task_id": t, "repeat": r, "model_answer": a, "status": s, "input_tokens": i, "output_tokens": o, "wall_time_s": w,
             "model": "gpt-4o-mini-2024-07-18"} for (t, r), (a, s, i, o, w) in ANSWERS.items()]
    res = write(tmp_path/"res.jsonl", recs)
    rep = json.loads(gaia("report", res, "--gold", tasks, "--json").stdout)
    want = by_hand()
    assert list(rep) == KEYS
    assert rep["accuracy"] == pytest.approx(want["accuracy"]) and rep["repeats"] == 2
    assert (rep["by_level"]["1"]["accuracy"], rep["by_level"]["1"]["min"], rep["by_level"]["1"]["max"]) == pytest.approx(want["level1"])
    assert (rep["pass_at_k"], rep["pass_all_k"]) == pytest.approx((want["pass_at_k"], want["pass_all_k"]))
    assert rep["tokens"] == want["tokens"] and rep["cost_usd"] == pytest.approx(want["cost"])
    assert rep["time"] == pytest.approx({"p50": want["p50"], "p95": want["p95"]})
    # "1234" is wrong against the gold "1,234": the official scorer reads a gold with a comma as a list
    assert rep["failures"] == {"timeout": 1, "error": 1, "no_answer": 0, "wrong_answer": 1}
    assert [q["task_id"] for q in rep["questions"]] == list(GOLD) and rep["questions"][1]["runs"][1]["failure"] == "timeout"
    # a price file overrides the default
    prices = tmp_path/"prices.json"; prices.write_text('{"gpt-4o-mini": {"input": 1, "output": 0}}')
    assert json.loads(gaia("report", res, "--gold", tasks, "--json", "--prices", prices).stdout)["cost_usd"] == pytest.approx(want["tokens"]["input"] / 1e6)


def test_older_files_and_bad_input(tmp_path):
    if FIXTURE.exists():   # a leaderboard file of an older run: gold beside the answer, no repeats, no cost
        rep = json.loads(gaia("report", FIXTURE, "--json").stdout)
        assert rep["accuracy"] == pytest.approx(37 / 53) and rep["repeats"] == 1 and rep["tokens"]["total"] == 0
    # a record without a path gets it from the run's log
    log = tmp_path/"run.jsonl"
    log.write_text("".join(json.dumps({"event": "step", "task_id": "x", "component": c}) + "\n"
                           for c in ["orchestrator", "planner", "expert/tools", "expert", "finalizer"]))
    old = write(tmp_path/"old.jsonl", [{"task_id": "x", "model_answer": "1", "final_answer": "1"}])
    (q,) = json.loads(gaia("report", old, "--log", log, "--json").stdout)["questions"]
    assert q["runs"][0]["path"] == {"agents": ["planner", "expert", "finalizer"], "critic_rejections": None, "tool_calls": 1}
    r = gaia("report", tmp_path/"gone.jsonl")
    assert r.returncode == 2 and "results file not found" in r.stderr
    bad = tmp_path/"bad.json"; bad.write_text("[1]")
    r = gaia("report", write(tmp_path/"r.jsonl", [{"task_id": "x", "model_answer": "1"}]), "--prices", bad)
    assert r.returncode == 2 and '"model": {"input": USD' in r.stderr
    r = gaia("report", tmp_path/"r.jsonl")
    assert r.returncode == 0 and "no gold answers" in r.stderr and "--gold" in r.stderr


def test_two_files_side_by_side(tmp_path):
    gold = {"task_id": None, "final_answer": "42", "level": 1}
    before = write(tmp_path/"before.jsonl", [{**gold, "task_id": t, "model_answer": a} for t, a in zip("wxyz", ["42", "42", "0", "0"])])
    after = write(tmp_path/"after.jsonl", [{**gold, "task_id": t, "model_answer": a} for t, a in zip("wxyz", ["42", "0", "42", "0"])])
    r = gaia("report", before, after)
    assert r.returncode == 0, r.stderr
    assert "after against before: fixed 1, broken 1, both right 1, both wrong 1" in r.stdout
    assert "fixed: y" in r.stdout and "broken: x" in r.stdout
    both = json.loads(gaia("report", before, after, "--json").stdout)
    assert set(both) == {"reports", "compare"} and both["compare"]["against_first"]["after"]["both_right"] == ["w"]


@pytest.mark.browser
def test_html_renders_in_headless_chromium(tmp_path, dry):
    "A scripted run with 3 repeats, its report page opened in Debian's chromium: charts and table drawn, nothing fetched."
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path("/usr/bin/chromium").exists(): pytest.skip("no /usr/bin/chromium")
    tasks = write(tmp_path/"tasks.jsonl", [{"task_id": f"t{i}", "Question": f"What is {i} + {42 - i}?", "Level": 1 + i % 3,
                                            "Final answer": "42"} for i in range(6)])
    out = tmp_path/"r3.jsonl"
    assert gaia("run", tasks, "--out", out, "--repeats", "3", "--dry-wrong", "0.4", "--seed", "5", "--no-progress", *dry).returncode == 0
    page_file = tmp_path/"report.html"
    r = gaia("report", out, "--gold", tasks, "--html", page_file)
    assert r.returncode == 0 and page_file.exists(), r.stderr
    fetched = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page(java_script_enabled=False)
        page.on("request", lambda req: fetched.append(req.url))
        page.goto(page_file.as_uri())
        bars = page.locator("svg rect")
        assert page.title() == "GAIA run report" and page.locator("svg").count() == 2 and bars.count() == 4   # all + 3 levels
        assert bars.first.bounding_box()["width"] > 0
        assert page.locator("table tr").count() == 7 and "pass@3" in page.inner_text("body")
        page.screenshot(path=str(tmp_path/"report.png"), full_page=True)
        browser.close()
    assert fetched == [page_file.as_uri()], fetched   # the page itself, nothing else
    assert (tmp_path/"report.png").stat().st_size > 10_000


def newcomer(tmp_path, *args):
    "`gaia-mas ARGS` as a new user runs it: in `tmp_path`, with a fresh HOME and no cache setting or key."
    import subprocess
    from cli_support import GAIA, newcomer_env
    return subprocess.run([*GAIA, *map(str, args)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env=newcomer_env(tmp_path/"home"))


def test_json_holds_every_figure_the_text_shows(tmp_path):
    "Total LLM calls, the overall agreement and the overall min and max over repeats are in --json as in the text."
    write(tmp_path/"tasks.jsonl", [{"task_id": f"t{i}", "Question": f"What is {i} + {42 - i}?", "Level": 1 + i % 2,
                                    "Final answer": "42"} for i in range(6)])
    run = ["run", "tasks.jsonl", "--provider", "scripted", "--no-progress", "--dry-wrong", "0.4", "--seed", "5"]
    assert newcomer(tmp_path, *run, "--out", "r3.jsonl", "--repeats", "3").returncode == 0
    text = newcomer(tmp_path, "report", "r3.jsonl", "--gold", "tasks.jsonl").stdout
    rep = json.loads(newcomer(tmp_path, "report", "r3.jsonl", "--gold", "tasks.jsonl", "--json").stdout)
    first = text.splitlines()[0]   # Accuracy: 55.6% (mean of 3 repeats, min 33.3%, max 66.7%) over ...
    assert f"min {100 * rep['overall']['min']:.1f}%, max {100 * rep['overall']['max']:.1f}%" in first, (first, rep["overall"])
    assert f"LLM calls: {rep['llm_calls']:,}" in text and rep["llm_calls"] == 6 * 3 * 7
    assert f"agreement across repeats: {100 * rep['agreement']:.1f}%" in text


def test_one_repeat_has_no_ranges_and_votes_are_named(tmp_path):
    "A single run's levels come without a [min – max] range; a --votes file's report says its answers are votes."
    write(tmp_path/"tasks.jsonl", [{"task_id": f"t{i}", "Question": f"What is {i} + {42 - i}?", "Level": 1,
                                    "Final answer": "42"} for i in range(4)])
    run = ["run", "tasks.jsonl", "--provider", "scripted", "--no-progress", "--dry-wrong", "0.4", "--seed", "5"]
    assert newcomer(tmp_path, *run, "--out", "one.jsonl").returncode == 0
    one = newcomer(tmp_path, "report", "one.jsonl", "--gold", "tasks.jsonl").stdout
    assert "Level 1: " in one and "[" not in one.split("Level 1: ")[1].splitlines()[0], one
    assert newcomer(tmp_path, *run, "--out", "votes.jsonl", "--votes", "3").returncode == 0
    voted = newcomer(tmp_path, "report", "votes.jsonl", "--gold", "tasks.jsonl")
    assert "plurality vote of up to 3 runs" in voted.stdout, voted.stdout
    v = json.loads(newcomer(tmp_path, "report", "votes.jsonl", "--gold", "tasks.jsonl", "--json").stdout)["votes"]
    assert (v["n"], v["questions"], v["runs_made"], v["scored"]) == (3, 4, 12, 4)
    assert v["vote_right"] <= v["some_run_right"] <= 4


@pytest.mark.browser
def test_html_fits_a_1280_window_and_a_free_run_costs_nothing(tmp_path):
    """A scripted run's page at 1280x800 in Debian's chromium: no sideways scrolling, a readable question column, and a
    cost axis that does not invent a scale when every run cost $0."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path("/usr/bin/chromium").exists(): pytest.skip("no /usr/bin/chromium")
    question = ("In the 2019 annual report of the city's water utility, how many kilometres of pipe were replaced, "
                "rounded to the nearest whole number, if the report gives the figure in miles only?")
    write(tmp_path/"tasks.jsonl", [{"task_id": f"c0ffee{i:02d}-5e1f-4a6b-9d7e-0123456789ab", "Question": question,
                                    "Level": 1 + i % 3, "Final answer": "42"} for i in range(6)])
    run = ["run", "tasks.jsonl", "--provider", "scripted", "--no-progress", "--repeats", "3", "--dry-wrong", "0.4"]
    assert newcomer(tmp_path, *run, "--out", "r3.jsonl").returncode == 0
    assert newcomer(tmp_path, "report", "r3.jsonl", "--gold", "tasks.jsonl", "--html", "report.html").returncode == 0
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 800}, java_script_enabled=True)
        page.goto((tmp_path/"report.html").as_uri())
        page_width = page.evaluate("document.documentElement.scrollWidth")
        question_cell = page.locator("table").last.locator("tr").nth(1).locator("td").nth(2).bounding_box()
        axis = page.locator("svg").nth(1).text_content()
        page.screenshot(path=str(tmp_path/"report.png"), full_page=True)
        browser.close()
    print(f"\npage width {page_width} px, question column {question_cell['width']:.0f} px; cost axis: {axis!r}")
    assert page_width <= 1280, page_width
    assert question_cell["width"] >= 200, question_cell   # a sentence per line, not a word or two
    assert "$1.15" not in axis and "all $0" in axis, axis
