"""`gaia-mas ask` as a new user runs it against the local Gemma server (tools/local_llm/serve.py), the one server of
the test session (`local_model_url`). The local budget is chosen by itself, and its guided steps walk the whole path: the plan, a
research step that calls a tool (the attachment, or a search answered by a fake web on loopback), the expert's
calculator, the critics and the finalizer. The properties are asserted, not the times. Run with `pytest -s` to see what each question printed.
The README's local command (the product question) is this test's; tests/test_readme.py leaves it here (its COVERED)."""
import json, re, subprocess, time
import pytest
from cli_support import GAIA, newcomer_env
from fake_web import fake_web

pytestmark = pytest.mark.real_server

QUESTIONS = {"product": ("What is 1234 times 5678?", None),
             "csv": ("What is the total of the amount column in the attached file?", "sales.csv"),
             "fact": ("What is the capital of France?", None)}


def ask(url:str, home, question:str, *args, **env) -> dict:
    "`gaia-mas ask QUESTION -v` with a fresh HOME and no key or --model: what it printed, and its log's last record."
    t0 = time.monotonic()
    r = subprocess.run([*GAIA, "ask", question, "-v", *args], cwd=home.parent, capture_output=True, text=True,
                       env=newcomer_env(home, OPENAI_BASE_URL=url, **env), timeout=600)
    log = next((home/".cache"/"gaia_mas"/"logs").glob("ask-*.jsonl"))
    end = next(json.loads(l) for l in log.read_text().splitlines() if '"event": "task_end"' in l)
    path = next((l.removeprefix("Path: ").split(" > ") for l in r.stdout.splitlines() if l.startswith("Path: ")), [])
    calls = [l.removeprefix("Tool call: ") for l in r.stdout.splitlines() if l.startswith("Tool call: ")]
    print(f"\n{question!r}: {time.monotonic() - t0:.0f} s, exit {r.returncode}, path {path}, tool calls {calls}, "
          f"answer {end['model_answer']!r}, error {end['error']!r}")
    return {"r": r, "end": end, "path": path, "calls": [c for c in calls if c != "(none)"], "log": log.read_text()}


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the model server may take START_TIMEOUT to load, then three questions of up to 170 s each
def test_three_questions_walk_the_whole_path(local_model_url, tmp_path):
    "The product, a CSV sum and a one-fact question: the agents reached, the tool calls and the answers."
    (tmp_path/"sales.csv").write_text("item,amount\npen,12\nbook,30\nlamp,45\n")
    with fake_web() as (web, web_env):
        runs = {k: ask(local_model_url, tmp_path/k, q, *(["--file", str(tmp_path/f)] if f else []), **web_env)
                for k, (q, f) in QUESTIONS.items()}
    for k, run in runs.items():   # the README's command: the local budget by itself, never a traceback
        assert "gaia-mas: budget local: " in run["r"].stderr and "Traceback" not in run["r"].stderr, run["r"].stderr
        assert "cut at max_tokens" not in run["log"], f"{k}: a reply was cut"
        assert run["path"][:2] == ["planner", "critic_planner"] and run["path"][-1] == "finalizer", (k, run["path"])
    # the product is right because the calculator computed it, and the expert repeated it
    product = runs["product"]
    assert product["end"]["status"] == "ok" and product["end"]["model_answer"] == "7006652", product["end"]
    assert any(re.fullmatch(r"expert: calculator\(expression='1234 \* 5678'\) -> 7006652", c) for c in product["calls"])
    # the attachment is read by a research step
    assert any(c.startswith("researcher: read_attachment(file_path='sales.csv') -> item,amount") for c in runs["csv"]["calls"])
    # the one-fact question searched the fake web
    assert web.queries and any(c.startswith("researcher: ") for c in runs["fact"]["calls"]), runs["fact"]["calls"]
    answered = [k for k, r in runs.items() if r["end"]["status"] == "ok"]
    expert = [k for k, r in runs.items() if {"expert", "critic_expert"} <= set(r["path"])]
    tools = [k for k, r in runs.items() if r["calls"]]
    assert len(answered) >= 2 and len(expert) >= 2 and len(tools) >= 2, (answered, expert, tools)
    for k in answered: assert runs[k]["r"].returncode == 0 and runs[k]["end"]["model_answer"]
    for k, r in runs.items():   # "no answer" only where a tool failed, never because a reply was cut
        if r["end"]["status"] != "ok": assert "max_tokens" not in (r["end"]["error"] or ""), (k, r["end"]["error"])
