"Smoke tests of the `gaia-mas` command as users run it: separate processes, offline."
import argparse, json, shutil, subprocess
import pytest
from cli_support import FIXTURE, GAIA, cli_env, dry, gaia, newcomer_env  # noqa: F401 (dry is a fixture)

pytestmark = pytest.mark.subprocess


def test_console_script_is_installed():
    exe = shutil.which("gaia-mas")
    if exe is None: pytest.skip("gaia-mas is not on PATH (pip install -e . declares it)")
    r = subprocess.run([exe, "--help"], capture_output=True, text=True, env=cli_env(), timeout=60)
    assert r.returncode == 0 and all(c in r.stdout for c in ("ask", "run", "score", "course"))


def test_ask_dry_run(dry):
    r = gaia("ask", "What is the capital of France?", *dry, "--dry-answer", "FINAL ANSWER: Paris.")
    assert (r.returncode, r.stdout) == (0, "Paris\n") and r.stderr.startswith("Log: ")   # the answer, and where its log is
    assert len(r.stderr.splitlines()) == 1, r.stderr


def test_missing_key_stops_before_any_work(tmp_path):
    tasks = tmp_path/"tasks.jsonl"
    tasks.write_text(json.dumps({"task_id": "a", "Question": "What is 2 + 2?", "Level": 1}) + "\n")
    r = gaia("run", tasks, "--out", tmp_path/"results.jsonl", "--cache-dir", tmp_path/"cache")
    assert r.returncode == 2 and "OPENAI_API_KEY is not set" in r.stderr
    assert not (tmp_path/"results.jsonl").exists()   # no empty results file left behind


def test_score_fixture_matches_the_leaderboard():
    if not FIXTURE.exists(): pytest.skip(f"fixture not found: {FIXTURE}")
    text = gaia("score", FIXTURE)
    assert text.returncode == 0 and text.stdout.startswith("Accuracy: 37/53 = 69.8%") and "Wrong answers (16):" in text.stdout
    summary = json.loads(gaia("score", FIXTURE, "--gold", FIXTURE, "--json").stdout)
    assert (summary["correct"], summary["total"], summary["levels"]["1"]["correct"]) == (37, 53, 37)


def test_run_parquet_with_attachments_and_filters(tmp_path, dry):
    pa, pq = pytest.importorskip("pyarrow"), pytest.importorskip("pyarrow.parquet")
    rows = [{"task_id": f"p{i}", "Question": f"Q{i}?", "Level": str(1 + i % 3), "Final answer": "42",
             "file_name": f"p{i}.txt" if i == 0 else ""} for i in range(9)]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path/"metadata.parquet")
    (tmp_path/"p0.txt").write_text("attached")
    r = gaia("run", tmp_path, "--level", "1", "--level", "2", "--limit", "4", "--out", tmp_path/"out.jsonl", "--concurrency", "2", *dry)
    assert r.returncode == 0, r.stderr
    assert "4/4 tasks answered, 0 failed" in r.stdout and "Accuracy: 4/4 = 100.0%" in r.stdout
    records = [json.loads(l) for l in (tmp_path/"out.jsonl").read_text().splitlines()]
    assert sorted(x["task_id"] for x in records) == ["p0", "p1", "p3", "p4"]
    assert {"task_id", "model_answer", "reasoning_trace", "llm_calls", "input_tokens", "output_tokens", "wall_time_s"} <= records[0].keys()
    logs = list((tmp_path/"cache"/"logs").glob("out-*.jsonl"))   # in the cache folder, as --cache-dir's help says
    steps = [json.loads(l) for l in logs[0].read_text().splitlines() if '"event": "step"' in l]
    assert len(logs) == 1 and {"task_id", "component", "step", "duration_s"} <= steps[0].keys()
    assert not list(tmp_path.glob("*.lock")) and not (tmp_path/"logs").exists()


def test_opik_only_when_tracing(tmp_path):
    code = ("import sys; from gaia_mas.cli import main; "
            "c = main(['ask', 'q?', '--provider', 'scripted', '--cache-dir', sys.argv[1]] + sys.argv[2:]); "
            "print(c, 'opik' in sys.modules)")
    off = subprocess.run([GAIA[0], "-c", code, str(tmp_path)], capture_output=True, text=True, env=cli_env(), timeout=60)
    assert off.stdout.split()[-2:] == ["0", "False"], off.stderr
    pytest.importorskip("opik")
    on = subprocess.run([GAIA[0], "-c", code, str(tmp_path), "--trace"], capture_output=True, text=True, env=cli_env(), timeout=120)
    assert on.stdout.split()[-2:] == ["0", "True"], on.stderr


def test_input_errors_before_the_key(tmp_path):
    "No key set: an empty question, a missing attachment and a bad task file are named first."
    cache = ["--cache-dir", tmp_path/"cache"]
    r = gaia("ask", "   ", *cache)
    assert (r.returncode, r.stderr) == (2, 'gaia-mas: the question is empty: gaia-mas ask "your question" [--file PATH]\n')
    r = gaia("ask", "What is in it?", "--file", tmp_path/"gone.pdf", *cache)
    assert r.returncode == 2 and "Attachment not found" in r.stderr and "OPENAI_API_KEY" not in r.stderr
    (tmp_path/"junk.jsonl").write_text("[1, 2, 3]\n{\"task_id\": 5}\n")
    r = gaia("run", tmp_path/"junk.jsonl", "--out", tmp_path/"out.jsonl", *cache)
    assert r.returncode == 2 and "holds no task" in r.stderr and "OPENAI_API_KEY" not in r.stderr, r.stderr


def test_score_without_gold(tmp_path, dry):
    "The results file's own gold answers when it has them; otherwise a message that says to pass --gold."
    rows = [{"task_id": "a", "model_answer": "Paris", "final_answer": "Paris", "level": 1},
            {"task_id": "b", "model_answer": "4", "Final answer": "5", "level": 2}]
    (tmp_path/"board.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = gaia("score", tmp_path/"board.jsonl")
    assert r.returncode == 0 and r.stdout.startswith("Accuracy: 1/2 = 50.0%"), r.stderr
    (tmp_path/"tasks.jsonl").write_text(json.dumps({"task_id": "t", "Question": "Q?", "Level": 1, "Final answer": "42"}) + "\n")
    assert gaia("run", tmp_path/"tasks.jsonl", "--out", tmp_path/"results.jsonl", "--no-progress", *dry).returncode == 0
    r = gaia("score", tmp_path/"results.jsonl")
    assert r.returncode == 2 and "carries no gold answers" in r.stderr and "--gold" in r.stderr
    assert gaia("score", tmp_path/"results.jsonl", "--gold", tmp_path/"tasks.jsonl").stdout.startswith("Accuracy: 1/1")


def test_run_exits_1_when_nothing_is_answered(tmp_path, dry):
    (tmp_path/"tasks.jsonl").write_text(json.dumps({"task_id": "t", "Question": "Q?", "Level": 1}) + "\n")
    r = gaia("run", tmp_path/"tasks.jsonl", "--out", tmp_path/"results.jsonl", "--no-progress", "--timeout", "0.2", "--latency", "0.5", *dry)
    assert r.returncode == 1 and "none of the 1 selected tasks could be answered" in r.stderr, (r.returncode, r.stderr)


def test_help_is_light_and_describes_the_dry_run():
    "--help imports neither LangChain nor the graph (its time is printed, not asserted), and says what 'scripted' does."
    code = ("import sys, time; t = time.perf_counter(); from gaia_mas.cli import parser; p = parser(); "
            "print(round(time.perf_counter() - t, 3), [m for m in ('langchain_core', 'langgraph', 'gaia_mas.gaia.agents.graph', 'gaia_mas.gaia.runs.runner') if m in sys.modules])")
    r = subprocess.run([GAIA[0], "-c", code], capture_output=True, text=True, env=cli_env(), timeout=60)
    print(f"parser built in {r.stdout.split()[0]} s")
    assert r.stdout.split(" ", 1)[1] == "[]\n", r.stdout + r.stderr
    help_ask = gaia("ask", "--help").stdout
    assert "dry run: every agent is a scripted model; the answer is --dry-answer, 42 by default" in " ".join(help_ask.split())


def test_rag_commands_are_hooked_in():
    "gaia_mas/rag/cli.py adds `rag` and `serve` to the main parser when it is there."
    import importlib.util
    if importlib.util.find_spec("gaia_mas.rag.cli") is None: pytest.skip("no gaia_mas.rag.cli in this build")
    r = gaia("--help")
    assert r.returncode == 0 and "rag" in r.stdout and "serve" in r.stdout


@pytest.mark.parametrize("extra", [[], ["--votes", "3"], ["--repeats", "2"]])
def test_run_as_a_new_user_types_it(tmp_path, extra):
    "A fresh HOME and no cache flag: the checkpoints go to ~/.cache/gaia_mas, and the run answers."
    split = tmp_path/"split"; split.mkdir()
    (split/"metadata.jsonl").write_text(json.dumps({"task_id": "s1", "Question": "What is 6 times 7?", "Level": 1,
                                                    "Final answer": "42", "file_name": ""}) + "\n")
    env = newcomer_env(tmp_path/"home")
    r = subprocess.run([*GAIA, "run", "split", "--provider", "scripted", "--out", "res.jsonl", *extra], cwd=tmp_path,
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (tmp_path/"res.jsonl").read_text().count("\n") >= 1
    assert (tmp_path/"home"/".cache"/"gaia_mas"/"checkpoints.sqlite").exists()


def test_run_with_the_cache_variable(tmp_path):
    split = tmp_path/"split"; split.mkdir()
    (split/"metadata.jsonl").write_text(json.dumps({"task_id": "s1", "Question": "Q?", "Level": 1}) + "\n")
    env = newcomer_env(tmp_path/"home", GAIA_MAS_CACHE=str(tmp_path/"c"))
    r = subprocess.run([*GAIA, "run", "split", "--provider", "scripted", "--out", "res.jsonl"], cwd=tmp_path,
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (tmp_path/"c"/"checkpoints.sqlite").exists() and not (tmp_path/"home"/".cache").exists()


def newcomer(tmp_path, *args, timeout=120):
    "`gaia-mas ARGS` as a new user runs it: in `tmp_path`, with a fresh HOME and no cache setting or key."
    return subprocess.run([*GAIA, *map(str, args)], cwd=tmp_path, capture_output=True, text=True, timeout=timeout,
                          env=newcomer_env(tmp_path/"home"))


def write_split(folder, levels=(1, 2)):
    "A GAIA-style split folder: one task per level."
    folder.mkdir()
    (folder/"metadata.jsonl").write_text("".join(json.dumps({"task_id": f"task-l{l}", "Question": f"Q{l}?", "Level": l,
                                                             "Final answer": "42", "file_name": ""}) + "\n" for l in levels))
    return folder


@pytest.mark.parametrize("selection", [["--task-id", "nope"], ["--level", "4"], ["--level", "3", "--task-id", "task-l1"]])
def test_filters_that_match_nothing_are_an_error(tmp_path, selection):
    "No task selected: the message names the filters and what the file holds, the exit is 2, and no file is written."
    write_split(tmp_path/"split")
    r = newcomer(tmp_path, "run", "split", "--provider", "scripted", "--out", "res.jsonl", *selection)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "no task in" in r.stderr and "holds 2 tasks of levels 1, 2" in r.stderr and "task-l1" in r.stderr, r.stderr
    assert "0/0" not in r.stdout and not (tmp_path/"res.jsonl").exists()
    assert not (tmp_path/"home"/".cache"/"gaia_mas"/"logs").exists()   # nothing started


def test_limit_zero_is_an_error(tmp_path):
    write_split(tmp_path/"split")
    r = newcomer(tmp_path, "run", "split", "--provider", "scripted", "--out", "res.jsonl", "--limit", "0")
    assert r.returncode == 2 and "--limit must be at least 1" in r.stderr and not (tmp_path/"res.jsonl").exists()


@pytest.mark.parametrize("command", ["score", "report"])
def test_a_closed_pipe_ends_quietly(tmp_path, command):
    "`gaia-mas score FILE | head -2`: two lines, then a quiet exit (141, as for SIGPIPE), no traceback."
    rows = [{"task_id": f"t{i}", "model_answer": "1", "final_answer": "2", "level": 1} for i in range(3000)]
    (tmp_path/"res.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cmd = " ".join([*(f"'{a}'" for a in GAIA), command, "res.jsonl", "| head -2"])
    r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       env=newcomer_env(tmp_path/"home"))
    assert (r.returncode, r.stderr) == (141, ""), (r.returncode, r.stderr)
    assert len(r.stdout.splitlines()) == 2 and r.stdout.startswith("Accuracy: ")


def test_every_argument_of_every_command_has_help():
    "Each positional argument and option of every gaia-mas command, nested ones included (rag sessions prune, serve), "
    "and each command in its parent's list, says what it is in --help."
    from gaia_mas.cli import parser
    def parsers(p, name="gaia-mas"):
        yield name, p
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for n, sub in a.choices.items(): yield from parsers(sub, f"{name} {n}")
    walked = dict(parsers(parser()))
    assert {"gaia-mas course submit", "gaia-mas rag sessions prune", "gaia-mas serve"} <= set(walked)
    silent = [(name, a.dest) for name, p in walked.items() for a in p._actions
              if not (a.help or "").strip() and not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]
    silent += [(name, c.dest) for name, p in walked.items() for a in p._actions
               if isinstance(a, argparse._SubParsersAction) for c in a._choices_actions if not (c.help or "").strip()]
    assert silent == []
    assert "the question, quoted" in gaia("ask", "--help").stdout
    assert "Hugging Face username" in " ".join(gaia("course", "submit", "--help").stdout.split())


def test_missing_key_names_the_dry_run(tmp_path):
    r = newcomer(tmp_path, "ask", "What is 2 + 2?")
    assert r.returncode == 2 and "OPENAI_API_KEY is not set" in r.stderr and "--provider scripted" in r.stderr, r.stderr
