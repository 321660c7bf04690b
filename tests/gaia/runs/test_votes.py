"`gaia-mas run --votes` and `--repeats` as users run them, on the noisy scripted model: separate processes, offline."
import json, signal, subprocess, sys, time
from collections import Counter
from cli_support import GAIA, cli_env, dry, gaia  # noqa: F401 (dry is a fixture)
import pytest

pytestmark = pytest.mark.subprocess

NOISY = ["--dry-wrong", "0.4", "--seed", "5", "--no-progress"]


def write_tasks(path, n):
    "A task file of n questions whose gold answer is the dry run's, 42."
    rows = [{"task_id": f"t{i:02d}", "Question": f"What is {i} + {42 - i}?", "Level": 1 + i % 3, "Final answer": "42"} for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return [r["task_id"] for r in rows]


def records(path):
    return [json.loads(l) for l in path.read_text().splitlines()]


def test_votes_raise_accuracy(tmp_path, dry):
    "5 votes beat 1 run on a model wrong in 40% of runs; each record carries its tally and the summed cost."
    write_tasks(tmp_path/"tasks.jsonl", 30)
    one, five = tmp_path/"one.jsonl", tmp_path/"five.jsonl"
    for out, votes in ((one, "1"), (five, "5")):
        r = gaia("run", tmp_path/"tasks.jsonl", "--out", out, "--votes", votes, "--concurrency", "4", *NOISY, *dry, timeout=300)
        assert r.returncode == 0, r.stderr
    single = sum(r["model_answer"] == "42" for r in records(one))
    voted = records(five)
    # each question's five answers are seeded per question, so the tallies are the same in every run; only a tie's
    # winner depends on which run finished first. Questions where 42 has strictly the most votes are right for sure.
    sure = sum(v[0]["answer"] == "42" and (len(v) == 1 or v[1]["count"] < v[0]["count"]) for v in (r["votes"]["answers"] for r in voted))
    right = sum(r["model_answer"] == "42" for r in voted)
    print(f"\n1 run: {single}/30 right, {sum(r['llm_calls'] for r in records(one))} LLM calls; "
          f"5 votes: {right}/30 right ({sure} certain whatever the tie breaks), {sum(r['llm_calls'] for r in voted)} LLM calls")
    assert right >= sure > single
    for r in voted:
        assert r["votes"]["n"] == 5 and len(r["votes"]["runs"]) == 5 and sum(a["count"] for a in r["votes"]["answers"]) == 5
        assert r["llm_calls"] == sum(x["llm_calls"] for x in r["votes"]["runs"]) == 35
        assert r["input_tokens"] == sum(x["input_tokens"] for x in r["votes"]["runs"])
        assert r["model_answer"] == r["votes"]["answers"][0]["answer"]


def test_early_stop_starts_only_the_runs_it_needs(tmp_path, dry):
    write_tasks(tmp_path/"tasks.jsonl", 6)
    r = gaia("run", tmp_path/"tasks.jsonl", "--out", tmp_path/"out.jsonl", "--votes", "5", "--votes-early-stop", "--no-progress", *dry)
    assert r.returncode == 0, r.stderr
    for rec in records(tmp_path/"out.jsonl"):   # always right: three agreeing runs decide, two never start
        assert (rec["model_answer"], len(rec["votes"]["runs"]), rec["llm_calls"], rec["votes"]["stopped_early"]) == ("42", 3, 21, True)


def test_repeats_show_disagreement(tmp_path, dry):
    write_tasks(tmp_path/"tasks.jsonl", 12)
    out = tmp_path/"r3.jsonl"
    r = gaia("run", tmp_path/"tasks.jsonl", "--out", out, "--repeats", "3", *NOISY, *dry)
    assert r.returncode == 0, r.stderr
    assert "36/36 answers (12 tasks x 3 repeats) answered" in r.stdout and "pass@3" in r.stdout
    assert sorted(Counter((x["task_id"], x["repeat"]) for x in records(out)).values()) == [1] * 36
    rep = json.loads(gaia("report", out, "--gold", tmp_path/"tasks.jsonl", "--json").stdout)
    assert rep["repeats"] == 3 and rep["pass_all_k"] <= rep["accuracy"] <= rep["pass_at_k"]
    assert any(q["agreement"] < 1 for q in rep["questions"]), "a noisy model's repeats should disagree somewhere"
    assert rep["failures"]["wrong_answer"] > 0


def lines(path):
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_kill_mid_repeats_and_votes_then_resume(tmp_path):
    "kill -9 in the middle of a run with repeats and votes: the resumed run loses and duplicates nothing."
    ids = write_tasks(tmp_path/"tasks.jsonl", 8)
    out = tmp_path/"results.jsonl"
    cmd = [*GAIA, "run", str(tmp_path/"tasks.jsonl"), "--out", str(out), "--repeats", "2", "--votes", "3", "--concurrency", "2",
           "--latency", "0.02", "--provider", "scripted", "--cache-dir", str(tmp_path/"cache"), *NOISY]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=cli_env())
    t_end = time.monotonic() + 120
    while lines(out) < 5 and p.poll() is None and time.monotonic() < t_end: time.sleep(0.01)
    p.send_signal(signal.SIGKILL); p.wait()
    assert p.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    at_kill = lines(out)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=cli_env())
    assert done.returncode == 0, done.stderr
    recs = records(out)
    counts = Counter((r["task_id"], r["repeat"]) for r in recs)
    print(f"\nkilled at {at_kill} of 16 records; resumed: {done.stderr.strip()}; "
          f"records resumed from checkpoints: {sum(r['resume'] != 'new' for r in recs)}")
    assert sorted(counts) == sorted((t, k) for t in ids for k in range(2)) and set(counts.values()) == {1}
    assert all(r["status"] == "ok" and len(r["votes"]["runs"]) == 3 for r in recs)
    for r in recs:   # each run's cost covers all its attempts (a whole run makes 7 calls), the record's covers its runs
        assert all(x["llm_calls"] >= 7 for x in r["votes"]["runs"]), r["votes"]["runs"]
        assert r["llm_calls"] == sum(x["llm_calls"] for x in r["votes"]["runs"]), r
        assert all(x["path"] == r["path"] for x in r["votes"]["runs"]), r   # the same whole path, resumed or not


def test_retry_failed_per_task_and_repeat(tmp_path, dry):
    write_tasks(tmp_path/"tasks.jsonl", 2)
    out = tmp_path/"out.jsonl"
    old = [{"task_id": "t00", "model_answer": "42", "status": "ok"},                       # written before repeats: repeat 0
           {"task_id": "t00", "repeat": 1, "model_answer": "", "status": "timeout"},
           {"task_id": "t01", "repeat": 0, "model_answer": "42", "status": "ok"},
           {"task_id": "t01", "repeat": 1, "model_answer": "42", "status": "ok"}]
    out.write_text("".join(json.dumps(r) + "\n" for r in old))
    r = gaia("run", tmp_path/"tasks.jsonl", "--out", out, "--repeats", "2", "--retry-failed", "--no-progress", *dry)
    assert r.returncode == 0 and "4 answers: 3 already answered" in r.stderr, r.stderr
    recs = records(out)
    assert len(recs) == 4 and [(x["task_id"], x["repeat"], x["status"]) for x in recs[3:]] == [("t00", 1, "ok")]


def test_votes_share_one_time_budget(tmp_path, dry):
    "--timeout covers all of a question's votes together: runs too slow for it are all recorded as timed out."
    write_tasks(tmp_path/"tasks.jsonl", 1)
    r = gaia("run", tmp_path/"tasks.jsonl", "--out", tmp_path/"out.jsonl", "--votes", "3", "--timeout", "0.3", "--latency", "0.3",
             "--no-progress", *dry)
    assert r.returncode == 1, r.stderr
    (rec,) = records(tmp_path/"out.jsonl")
    assert rec["status"] == "timeout" and [x["status"] for x in rec["votes"]["runs"]] == ["timeout"] * 3 and rec["model_answer"] == ""


LATE_RUN_KILLED = '''
import os, signal, sys
from pathlib import Path
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables.config import var_child_runnable_config
from gaia_mas.core.scripted import ScriptedChatModel
from gaia_mas.gaia.runs.checkpoints import open_checkpointer
from gaia_mas.gaia.agents.config import load_baseline_prompts, make_agent_configs
from gaia_mas.gaia.agents.graph import create_multi_agent_graph
from gaia_mas.gaia.runs.ledger import open_ledger
from gaia_mas.gaia.runs.runner import run_batch
from gaia_mas.gaia.agents.scripted import happy_path_responder
from gaia_mas.gaia.runs.tasks import ResultWriter

cache = Path(sys.argv[1])

def respond(messages):
    "Runs 0, 1 and 2 answer 1, 2 and 3, so the vote stays open and starts runs 3 and 4, which answer 4."
    tid = str(((var_child_runnable_config.get() or {}).get("configurable") or {}).get("thread_id"))
    return happy_path_responder(next((a for v, a in (("#v0", "1"), ("#v1", "2"), ("#v2", "3")) if v in tid), "4"))(messages)

class KillLate(BaseCallbackHandler):
    "kill -9 as run 3 makes its last call, once."
    def __init__(self): self.calls = 0
    def on_chat_model_start(self, serialized, messages, *, metadata=None, **kw):
        if "#v3" not in str((metadata or {}).get("thread_id")): return
        self.calls += 1
        if self.calls == 7 and not (cache/"killed").exists(): (cache/"killed").touch(); os.kill(os.getpid(), signal.SIGKILL)

with open_checkpointer(cache) as saver, open_ledger(cache) as ledger:
    app, _ = create_multi_agent_graph(make_agent_configs(load_baseline_prompts()), research_tools=[], checkpointer=saver,
                                      llms=ScriptedChatModel(responder=respond, latency=0.1))
    run_batch(app, [{"task_id": "t1", "question": "What is 2 + 2?"}], ResultWriter(cache/"results.jsonl"), 1,
              votes=5, early_stop=True, callbacks=[KillLate()], ledger=ledger)
'''


def test_a_resumed_vote_counts_its_own_earlier_time(tmp_path):
    "An early-stopping vote killed while a run that started late is going: the resumed record's time covers the runs "
    "before it and all of it (two runs' seven 0.1 s calls one after the other), not only the longest run's part."
    script, cache = tmp_path/"vote.py", tmp_path/"cache"
    script.write_text(LATE_RUN_KILLED); cache.mkdir()
    codes = [subprocess.run([sys.executable, str(script), str(cache)], capture_output=True, text=True, timeout=120,
                            env=cli_env()).returncode for _ in range(2)]
    (r,) = records(cache/"results.jsonl")
    runs = r["votes"]["runs"]
    print(f"\nkilled, then resumed ({codes}): {r['wall_time_s']} s, {r['llm_calls']} calls; runs: "
          f"{[(x['vote'], x['answer'], x['resume'], x['wall_time_s']) for x in runs]}")
    assert codes == [-signal.SIGKILL, 0] and r["model_answer"] == "4"
    assert [x["resume"] for x in runs] == ["finished"] * 3 + ["unfinished"] * 2, runs
    assert r["wall_time_s"] >= 2 * 7 * 0.1, r
