"""`kill -9` in the middle of `gaia-mas run`, twice, then a torn last line, then a resume: every task ends answered
exactly once, and the questions that were in flight continue from their last completed step."""
import json, signal, subprocess, sys, time
from collections import Counter
from cli_support import GAIA, cli_env
import pytest

pytestmark = pytest.mark.subprocess

N_TASKS = 30


def write_tasks(path, n):
    "A GAIA-style metadata.jsonl of n tasks."
    rows = [{"task_id": f"t{i:02d}", "Question": f"What is {i} + {i}?", "Level": 1, "Final answer": "42", "file_name": ""} for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return [r["task_id"] for r in rows]


def lines(path):
    "Complete lines in the results file so far."
    return path.read_bytes().count(b"\n") if path.exists() else 0


def kill_when(cmd, out, n_lines, deadline=90):
    "Start `cmd`, kill -9 it once `out` has `n_lines` lines; returns the lines at the kill."
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=cli_env())
    t_end = time.monotonic() + deadline
    while lines(out) < n_lines and p.poll() is None and time.monotonic() < t_end: time.sleep(0.01)
    p.send_signal(signal.SIGKILL); p.wait()
    assert p.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    return lines(out)


def test_kill_9_and_resume(tmp_path):
    ids = write_tasks(tmp_path/"metadata.jsonl", N_TASKS)
    out = tmp_path/"results.jsonl"
    cmd = [*GAIA, "run", str(tmp_path/"metadata.jsonl"), "--out", str(out), "--concurrency", "4", "--no-progress",
           "--provider", "scripted", "--latency", "0.05", "--cache-dir", str(tmp_path/"cache")]
    at_kills = [kill_when(cmd, out, 4), kill_when(cmd, out, 14)]
    with open(out, "ab") as f: f.write(b'{"task_id": "t29", "model_answer": "4')   # as if killed mid-write
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=cli_env())
    assert done.returncode == 0, done.stderr
    records = [json.loads(l) for l in out.read_text().splitlines()]
    counts = Counter(r["task_id"] for r in records)
    resumed = [r["task_id"] for r in records if r["resume"] == "unfinished"]
    calls_after_resume = {r["task_id"]: r["llm_calls"] for r in records if r["resume"] == "unfinished"}
    print(f"\nkilled with -9 at {at_kills[0]} and {at_kills[1]} answers written, then appended a torn line; "
          f"the resumed run said: {' | '.join(done.stderr.strip().splitlines())}")
    print(f"records: {len(records)} for {N_TASKS} tasks, most records for one task: {max(counts.values())}; "
          f"continued from their last completed step: {sorted(resumed)}; LLM calls each made after the resume "
          f"(a full run makes 7): {calls_after_resume}")
    assert sorted(counts) == ids and set(counts.values()) == {1}
    assert all(r["status"] == "ok" and r["model_answer"] == "42" for r in records)
    assert resumed, "the questions in flight at the kill should continue from their checkpoints"


def start_run(tmp_path, latency:float, answered:int):
    "A scripted run of 16 tasks, 4 at a time, started as a terminal starts it; returns once `answered` are written."
    out = tmp_path/"results.jsonl"
    cmd = [*GAIA, "run", str(tmp_path/"metadata.jsonl"), "--out", str(out), "--concurrency", "4", "--no-progress",
           "--provider", "scripted", "--latency", str(latency), "--cache-dir", str(tmp_path/"cache")]
    # A shell without job control starts background jobs with SIGINT ignored, and children inherit that:
    # give the run the default handler, as a terminal would, so Ctrl-C is what these tests send.
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(),
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    t_end = time.monotonic() + 120   # a loaded machine starts the run slowly; a signal before it starts proves nothing
    while lines(out) < answered and p.poll() is None and time.monotonic() < t_end: time.sleep(0.01)
    assert lines(out) >= answered, f"the run wrote {lines(out)} answers in 120 s (exit {p.poll()})"
    return cmd, out, p


def test_ctrl_c_finishes_in_flight_then_resume(tmp_path):
    ids = write_tasks(tmp_path/"metadata.jsonl", 16)
    cmd, out, p = start_run(tmp_path, 0.05, 2)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130 and "finishing the" in err and "run the same command again to resume" in err, err
    interrupted = lines(out)
    assert 2 <= interrupted < 16
    assert subprocess.run(cmd, capture_output=True, timeout=120, env=cli_env()).returncode == 0
    counts = Counter(json.loads(l)["task_id"] for l in out.read_text().splitlines())
    assert sorted(counts) == ids and set(counts.values()) == {1}


def test_a_second_ctrl_c_leaves_no_error_about_the_ledger(tmp_path):
    "A second Ctrl-C leaves the questions in flight to the next run; the calls that end meanwhile are still written to "
    "the ledger (its cost record), with no error about a closed database, and no question is reported as failed."
    write_tasks(tmp_path/"metadata.jsonl", 16)
    _, _, p = start_run(tmp_path, 0.2, 1)
    p.send_signal(signal.SIGINT); time.sleep(0.5); p.send_signal(signal.SIGINT)   # the second while questions run
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130 and "finishing the" in err, err
    assert "closed database" not in err and "LedgerWriter" not in err, err
    assert "Traceback" not in err and "failed after" not in err, err   # the questions left behind are not failures


FULL_PATH = ["input_interface", "orchestrator", "planner", "orchestrator", "critic", "orchestrator", "researcher",
             "orchestrator", "critic", "orchestrator", "expert", "orchestrator", "critic", "orchestrator", "finalizer"]


def newcomer_cmd(tmp_path, *args):
    "A `gaia-mas` command line and the environment of a new user (fresh HOME, no cache setting)."
    from cli_support import newcomer_env
    return [*GAIA, *map(str, args)], newcomer_env(tmp_path/"home")


def test_a_resumed_record_covers_the_whole_task_after_kill_9(tmp_path):
    "Killed mid-question, then run again: the questions that resumed report all their calls, time and path."
    write_tasks(tmp_path/"metadata.jsonl", 8)
    out = tmp_path/"results.jsonl"
    cmd, env = newcomer_cmd(tmp_path, "run", "metadata.jsonl", "--out", out, "--concurrency", "4", "--no-progress",
                            "--provider", "scripted", "--latency", "0.1")
    p = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    t_end = time.monotonic() + 90
    while lines(out) < 1 and p.poll() is None and time.monotonic() < t_end: time.sleep(0.01)
    time.sleep(0.25)   # the next questions are a few calls in
    p.send_signal(signal.SIGKILL); p.wait()
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    resumed = [json.loads(l) for l in out.read_text().splitlines() if json.loads(l)["resume"] == "unfinished"]
    print(f"\nresumed: {[(r['task_id'], r['llm_calls'], r['wall_time_s']) for r in resumed]}")
    assert resumed, "some questions should have been in flight at the kill"
    for r in resumed:   # a whole question makes 7 calls; a call cut off by the kill is made again, and counts
        assert r["llm_calls"] >= 7 and r["path"] == {"agents": FULL_PATH, "critic_rejections": 0, "tool_calls": 0}, r
        assert r["wall_time_s"] >= 7 * 0.1, r


def test_a_retried_timeout_covers_both_attempts(tmp_path):
    "`--timeout` stops a question after a few calls; `--retry-failed` continues it, and its record counts both parts."
    write_tasks(tmp_path/"metadata.jsonl", 1)
    run = ["run", "metadata.jsonl", "--out", "results.jsonl", "--no-progress", "--provider", "scripted",
           "--latency", "0.2"]
    cmd, env = newcomer_cmd(tmp_path, *run, "--timeout", "0.7")
    assert subprocess.run(cmd, cwd=tmp_path, capture_output=True, timeout=120, env=env).returncode == 1
    (first,) = [json.loads(l) for l in (tmp_path/"results.jsonl").read_text().splitlines()]
    cmd, env = newcomer_cmd(tmp_path, *run, "--retry-failed")
    r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    (second,) = [json.loads(l) for l in (tmp_path/"results.jsonl").read_text().splitlines()]
    print(f"\nfirst attempt: {first['status']}, {first['llm_calls']} calls, {first['wall_time_s']} s; "
          f"the retried record: {second['llm_calls']} calls, {second['wall_time_s']} s, resume {second['resume']}")
    assert (first["status"], second["status"], second["resume"]) == ("timeout", "ok", "unfinished")
    assert 0 < first["llm_calls"] < 7 <= second["llm_calls"]
    assert second["wall_time_s"] >= first["wall_time_s"] and second["path"]["agents"] == FULL_PATH
    assert second["input_tokens"] > first["input_tokens"] and (first["attempts"], second["attempts"]) == (1, 2)


KILLED_RUN = '''
import json, os, signal, sys
from pathlib import Path
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from gaia_mas.core.scripted import ScriptedChatModel
from gaia_mas.gaia.runs.checkpoints import open_checkpointer
from gaia_mas.gaia.agents.config import load_baseline_prompts, make_agent_configs
from gaia_mas.gaia.agents.graph import create_multi_agent_graph
from gaia_mas.gaia.runs.ledger import open_ledger
from gaia_mas.gaia.runs.logs import component_of
from gaia_mas.gaia.runs.runner import run_batch
from gaia_mas.gaia.agents.scripted import happy_path_responder, role_of
from gaia_mas.gaia.runs.tasks import ResultWriter

cache, kills = Path(sys.argv[1]), sys.argv[2:]   # kill -9 once at each of these points, in turn, one per run

@tool
def lookup(query: str) -> str:
    "Look a fact up."
    return "a fact"

happy = happy_path_responder("4")
def respond(messages):
    "Two lookups, then a result; the critic rejects research that is not checked, and the retry checks it."
    role, text = role_of(messages), " ".join(str(m.content) for m in messages if not isinstance(m, SystemMessage))
    if role == "researcher" and "feedback" in text: return {"result": "Fact found and checked."}
    if role == "researcher" and sum(isinstance(m, ToolMessage) for m in messages) < 2:
        return AIMessage(content="", tool_calls=[{"name": "lookup", "args": {"query": "x"}, "id": "c1"}])
    if role == "critic" and "Research result" in text and "checked" not in text:
        return {"decision": "reject", "feedback": "Check it."}
    return happy(messages)

class KillAfter(BaseCallbackHandler):
    "kill -9 just after a step ended (the ledger has it, its checkpoint is not saved yet): a tool step, a rejection."
    def __init__(self): self.parts = {}
    def on_chain_start(self, serialized, inputs, *, run_id, tags=None, metadata=None, **kw):
        self.parts[run_id] = component_of(metadata or {})
    def on_chain_end(self, outputs, *, run_id, **kw):
        part = self.parts.pop(run_id, "")
        point = ("tool" if part.endswith("/tools") else
                 "rejection" if isinstance(outputs, dict) and "reject" in outputs.values() else None)
        if point and point in kills and not (cache/point).exists():
            (cache/point).touch(); os.kill(os.getpid(), signal.SIGKILL)

configs = make_agent_configs(load_baseline_prompts())
with open_checkpointer(cache) as saver, open_ledger(cache) as ledger:
    app, _ = create_multi_agent_graph(configs, research_tools=[lookup], llms=ScriptedChatModel(responder=respond),
                                      checkpointer=saver)
    run_batch(app, [{"task_id": "t1", "question": "What is 2 + 2?"}], ResultWriter(cache/"results.jsonl"), 1,
              callbacks=[KillAfter()], ledger=ledger)
'''


def test_a_step_run_again_after_kill_9_counts_once_in_the_path(tmp_path):
    "Killed just after a tool step, then just after a critic's rejection, each before its checkpoint was saved: the "
    "resumed attempts run those steps again, and the record's path counts each tool call and rejection once."
    script = tmp_path/"killed_run.py"
    script.write_text(KILLED_RUN)
    def run(cache, *kills):
        cache.mkdir(exist_ok=True)
        return subprocess.run([sys.executable, str(script), str(cache), *kills], capture_output=True, text=True,
                              timeout=120, env=cli_env())
    whole = run(tmp_path/"whole")
    assert whole.returncode == 0, whole.stderr
    (once,) = [json.loads(l) for l in (tmp_path/"whole"/"results.jsonl").read_text().splitlines()]
    codes = [run(tmp_path/"killed", "tool", "rejection").returncode for _ in range(3)]
    (resumed,) = [json.loads(l) for l in (tmp_path/"killed"/"results.jsonl").read_text().splitlines()]
    print(f"\nin one go: {once['llm_calls']} calls, {once['path']}; killed twice ({codes}): {resumed['llm_calls']} "
          f"calls, {resumed['path']}")
    assert codes == [-signal.SIGKILL, -signal.SIGKILL, 0] and resumed["resume"] == "unfinished"
    assert (once["path"]["critic_rejections"], once["path"]["tool_calls"]) == (1, 2), once
    assert resumed["path"] == once["path"] and resumed["llm_calls"] >= once["llm_calls"]


FLAKY_RUN = '''
import os, signal, sys
from pathlib import Path
from langchain_core.messages import SystemMessage
import gaia_mas.gaia.agents.build as build
from gaia_mas.cli import main
from gaia_mas.gaia.agents.scripted import happy_path_responder, role_of

fails = Path(sys.argv[1])   # how many more times the expert fails, one failure a run; "kill": kill -9 at the first call

def flaky(answer="42", n_research=1):
    "The dry run's happy path, but the expert's call raises while `fails` counts above 0, as a model server down."
    happy = happy_path_responder(answer, n_research)
    def respond(messages):
        if (left := fails.read_text()) == "kill": fails.write_text("0"); os.kill(os.getpid(), signal.SIGKILL)
        if role_of(messages) == "expert" and (left := int(left)) > 0:
            fails.write_text(str(left - 1)); raise RuntimeError("the model server is down")
        return happy(messages)
    return respond

build.happy_path_responder = flaky
sys.exit(main(sys.argv[2:]))
'''


COUNTS = ("llm_calls", "input_tokens", "output_tokens")


def spent(*records):
    "The LLM calls and tokens of `records` together."
    return [sum(r[k] for r in records) for k in COUNTS]


def flaky_runner(tmp_path):
    "`run(out, fails, *options)`: `gaia-mas run` of one task whose expert fails `fails` times; its exit code, records."
    write_tasks(tmp_path/"metadata.jsonl", 1)
    script, fails = tmp_path/"flaky_run.py", tmp_path/"fails"
    script.write_text(FLAKY_RUN)
    def run(out, left, *more):
        fails.write_text(str(left))
        cmd, env = newcomer_cmd(tmp_path, "run", "metadata.jsonl", "--out", out, "--no-progress", "--provider",
                                "scripted", *more)
        done = subprocess.run([sys.executable, str(script), str(fails), *cmd[len(GAIA):]], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120, env=env)
        return done.returncode, [json.loads(l) for l in (tmp_path/out).read_text().splitlines()]
    return run


def test_retry_failed_counts_every_attempt_once(tmp_path):
    "A question fails twice (its expert's model call raises), and `--retry-failed` runs it again each time: the record "
    "and the report count the calls, tokens and time of all three attempts, each once, and say it took three."
    run = flaky_runner(tmp_path)
    code, (whole,) = run("whole.jsonl", 0)                  # the question in one go, for its cost
    assert code == 0 and whole["status"] == "ok", whole
    attempts = [run("results.jsonl", 1), run("results.jsonl", 1, "--retry-failed"),
                run("results.jsonl", 0, "--retry-failed")]
    (first,), (second,), (third,) = [recs for _, recs in attempts]
    seen = [(r["status"], r["llm_calls"], r["input_tokens"], r["wall_time_s"], r.get("attempts"))
            for r in (first, second, third)]
    print(f"\nin one go: {whole['llm_calls']} calls; the attempts' records: {seen}")
    assert [c for c, _ in attempts] == [1, 1, 0] and [s[0] for s in seen] == ["error", "error", "ok"]
    assert 0 < first["llm_calls"] < whole["llm_calls"]
    assert spent(second) == spent(first, first), (first, second)   # two failed attempts alike
    assert spent(third) == spent(second, whole), (second, third, whole)
    assert third["wall_time_s"] >= second["wall_time_s"] >= first["wall_time_s"]
    assert (first.get("attempts"), second.get("attempts"), third.get("attempts")) == (1, 2, 3)
    cmd, env = newcomer_cmd(tmp_path, "report", "results.jsonl", "--json")
    report = json.loads(subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env).stdout)
    assert (report["llm_calls"], report["tokens"]["input"], report["tokens"]["output"], report["attempts"]) == \
        (*spent(third), 3), report
    text = subprocess.run(cmd[:-1], cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env).stdout
    assert f"LLM calls: {third['llm_calls']}" in text and "Attempts: 3 for 1 run" in text, text


def test_a_retry_killed_after_the_drop_loses_nothing(tmp_path):
    "`--retry-failed` drops the failed record, then is killed at the retry's first model call; the next plain run "
    "answers the task, and its record still counts the failed attempt, once."
    run = flaky_runner(tmp_path)
    code, (whole,) = run("whole.jsonl", 0)
    assert code == 0, whole
    code, (failed,) = run("results.jsonl", 1)
    killed, left = run("results.jsonl", "kill", "--retry-failed")
    code, (answered,) = run("results.jsonl", 0)
    print(f"\nfailed: {failed['llm_calls']} calls; killed after the drop ({killed}, {len(left)} records left); "
          f"then: {answered['status']}, {answered['llm_calls']} calls, attempts {answered.get('attempts')}")
    assert (failed["status"], killed, left, code, answered["status"]) == ("error", -signal.SIGKILL, [], 0, "ok")
    assert spent(answered) == spent(failed, whole), (failed, answered, whole)
    assert answered["attempts"] == 2 and answered["wall_time_s"] >= failed["wall_time_s"]


def test_retry_failed_answers_a_failed_vote(tmp_path):
    "Every run of a three-run vote fails (the expert's model call raises), then `--retry-failed` answers it with fresh "
    "runs, not their failed final states read back; the record counts both votes' calls once each."
    run = flaky_runner(tmp_path)
    code, (whole,) = run("whole.jsonl", 0, "--votes", "3")
    assert code == 0 and whole["status"] == "ok", whole
    code, (failed,) = run("results.jsonl", 100, "--votes", "3")
    assert code == 1 and failed["status"] == "error", failed
    code, (retried,) = run("results.jsonl", 0, "--votes", "3", "--retry-failed")
    print(f"\nvote in one go: {whole['llm_calls']} calls; failed vote: {failed['llm_calls']}; "
          f"retried: {retried['status']}, {retried['llm_calls']} calls, attempts {retried.get('attempts')}")
    assert (code, retried["status"], retried["model_answer"]) == (0, "ok", "42"), retried
    assert spent(retried) == spent(failed, whole), (failed, retried, whole)
    assert retried["attempts"] == 2


def test_a_retried_vote_that_stops_early_counts_the_runs_it_skips(tmp_path):
    "A three-run vote fails, then `--retry-failed --votes-early-stop` decides after two runs: the record still counts "
    "what the failed vote's third run spent, since that was paid for."
    run = flaky_runner(tmp_path)
    code, (failed,) = run("results.jsonl", 100, "--votes", "3")
    assert code == 1 and failed["status"] == "error", failed
    code, (retried,) = run("results.jsonl", 0, "--votes", "3", "--votes-early-stop", "--retry-failed")
    code2, (two,) = run("two.jsonl", 0, "--votes", "3", "--votes-early-stop")   # the same vote in one go
    print(f"\nfailed vote: {failed['llm_calls']} calls; retried with early stop: {retried['status']}, "
          f"{len(retried['votes']['runs'])} runs, {retried['llm_calls']} calls; in one go: {two['llm_calls']}")
    assert (code, code2, retried["status"]) == (0, 0, "ok")
    assert (len(retried["votes"]["runs"]), len(two["votes"]["runs"]), retried["attempts"]) == (2, 2, 2)
    assert spent(retried) == spent(failed, two), (failed, retried, two)
