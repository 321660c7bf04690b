"""Terminal escapes in a results file never reach the terminal: `gaia-mas report` (text and --json) and `gaia-mas
score` print task ids and answers that carry an OSC 52 clipboard write, a reset (ESC c) and a C1 CSI as escaped text."""
import json
import pytest

pytestmark = pytest.mark.subprocess

from cli_support import gaia

RAW = ("\x1b", "\x9b", "\u202e", "\x07")
TASK = "t1\x1bc\x1b]52;c;cm0gLXJmIH4=\x07"
ANSWER = "Paris\x9b2J\u202eevil"


@pytest.fixture
def results(tmp_path):
    path = tmp_path/"results.jsonl"
    recs = [{"task_id": TASK, "level": 1, "question": "Capital of France?\x1b[8m hidden", "final_answer": "Rome",
             "model_answer": ANSWER}, {"task_id": "t2", "level": 1, "question": "2+2?", "final_answer": "4",
                                       "model_answer": "4"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


@pytest.mark.security
@pytest.mark.parametrize("cmd", [("report",), ("report", "--json"), ("score",), ("score", "--json")],
                         ids=["report", "report-json", "score", "score-json"])
def test_escape_sequences_in_a_results_file_are_printed_escaped(results, cmd):
    r = gaia(cmd[0], results, *cmd[1:])
    assert r.returncode == 0, r.stderr
    assert "Paris" in r.stdout, r.stdout
    assert not any(c in r.stdout + r.stderr for c in RAW), repr(r.stdout)
    if "--json" in cmd: assert ANSWER in json.dumps(json.loads(r.stdout), ensure_ascii=False)
