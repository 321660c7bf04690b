"""`gaia-mas ask` as a new user runs it against the local Gemma server: the local budget is chosen by itself, and the
command ends with an answer or a clear "no answer" (on two idle cores well within three minutes; the time is printed,
not asserted). Run with `pytest -s` to see the time and how the question went. The README shows this very command;
tests/test_readme.py leaves it to this test (its COVERED)."""
import json, subprocess, time
import pytest
from cli_support import GAIA, newcomer_env

pytestmark = pytest.mark.real_server


@pytest.mark.timeout(900)  # the model server may take START_TIMEOUT to load, the question 600 s on a busy machine
def test_ask_a_local_model_finishes(tmp_path, local_model_url):
    env = newcomer_env(tmp_path/"home", OPENAI_BASE_URL=local_model_url)
    t0 = time.monotonic()
    r = subprocess.run([*GAIA, "ask", "What is the capital of France?", "--model", "gemma-3-270m"], cwd=tmp_path,
                       capture_output=True, text=True, env=env, timeout=600)
    took = time.monotonic() - t0
    log = next((tmp_path/"home"/".cache"/"gaia_mas"/"logs").glob("ask-*.jsonl"))
    end = next(json.loads(l) for l in log.read_text().splitlines() if '"event": "task_end"' in l)
    print(f"\ngaia-mas ask took {took:.0f} s (the question {end['wall_time_s']} s, {end['llm_calls']} LLM calls, "
          f"{end['output_tokens']} tokens written); exit {r.returncode}; answer {r.stdout.strip()!r}; "
          f"stderr: {r.stderr.strip()[-300:]!r}")
    assert "gets the local budget" in r.stderr, r.stderr
    if r.returncode == 0: assert r.stdout.strip(), "an answer"
    else: assert r.returncode == 1 and "gaia-mas: no answer: " in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
