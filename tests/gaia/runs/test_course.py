"The Agents Course round trip through the CLI processes, against a stand-in scoring API on 127.0.0.1."
import json
from gaia_mas.gaia.runs.course import fake_course_server
from cli_support import dry, gaia  # noqa: F401 (dry is a fixture)
import pytest

pytestmark = pytest.mark.subprocess

QUESTIONS = [{"task_id": "c1", "question": "What is 6 * 7?", "Level": "1", "file_name": ""},
             {"task_id": "c2", "question": "What number is in the attached file?", "Level": "1", "file_name": "c2.txt"},
             {"task_id": "c3", "question": "How many legs does a spider have?", "Level": "1", "file_name": ""}]


def test_fetch_run_submit(tmp_path, dry):
    with fake_course_server(QUESTIONS, files={"c2": b"42"}, gold={"c1": "42", "c2": "42", "c3": "8"}) as api:
        fetched = gaia("course", "fetch", "--out", tmp_path/"course", "--base-url", api.url)
        assert fetched.returncode == 0, fetched.stderr
        assert (tmp_path/"course"/"c2.txt").read_bytes() == b"42"
        ran = gaia("run", tmp_path/"course", "--out", tmp_path/"results.jsonl", "--no-progress", *dry)
        assert ran.returncode == 0, ran.stderr
        sent = gaia("course", "submit", tmp_path/"results.jsonl", "--username", "alice",
                    "--agent-code", "https://huggingface.co/spaces/alice/agent/tree/main", "--base-url", api.url, "--json")
        assert sent.returncode == 0, sent.stderr
    body = api.submissions[0]
    assert body["username"] == "alice" and body["agent_code"].endswith("/tree/main")
    assert sorted(body["answers"], key=lambda a: a["task_id"]) == [{"task_id": t, "submitted_answer": "42"} for t in ("c1", "c2", "c3")]
    assert json.loads(sent.stdout)["correct_count"] == 2


def test_unreachable_server_is_a_clear_error(tmp_path):
    with fake_course_server(QUESTIONS) as api: url = api.url   # closed once the block ends
    r = gaia("course", "fetch", "--out", tmp_path/"course", "--base-url", url, timeout=60)
    assert r.returncode == 2 and r.stderr.startswith(f"gaia-mas: GET {url}/questions failed:"), r.stderr


def test_hostile_file_names_stay_in_the_folder(tmp_path):
    "File names from the server are data: `../x` and absolute names land inside --out, or are refused."
    hostile = [{"task_id": "h1", "question": "?", "Level": "1", "file_name": "../up.txt"},
               {"task_id": "h2", "question": "?", "Level": "1", "file_name": str(tmp_path/"abs.txt")},
               {"task_id": "h3", "question": "?", "Level": "1", "file_name": ".."}]
    with fake_course_server(hostile, files={"h1": b"1", "h2": b"2", "h3": b"3"}) as api:
        fetched = gaia("course", "fetch", "--out", tmp_path/"course", "--base-url", api.url)
    assert fetched.returncode == 0, fetched.stderr
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["abs.txt", "course", "metadata.jsonl", "up.txt"]
    assert (tmp_path/"course"/"up.txt").read_bytes() == b"1" and (tmp_path/"course"/"abs.txt").read_bytes() == b"2"
    assert "Attachment of h3 refused" in fetched.stderr and "3 questions" in fetched.stdout


def test_a_failed_fetch_leaves_no_folder(tmp_path):
    "`gaia-mas course fetch` against a server that is gone: a clear error, and no empty ./course in the user's folder."
    import subprocess
    from cli_support import GAIA, newcomer_env
    with fake_course_server(QUESTIONS) as api: url = api.url
    r = subprocess.run([*GAIA, "course", "fetch", "--base-url", url], cwd=tmp_path, capture_output=True, text=True,
                       timeout=60, env=newcomer_env(tmp_path/"home"))
    assert r.returncode == 2 and "failed" in r.stderr, r.stderr
    assert not (tmp_path/"course").exists()
