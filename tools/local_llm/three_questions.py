"""Ask the local model three short questions as a new user would, and print what each run did.

    python tools/local_llm/three_questions.py            # starts serve.py on a free port, stops it at the end
    python tools/local_llm/three_questions.py --base-url http://127.0.0.1:8080/v1

The questions: a product ("What is 1234 times 5678?"), the sum of a small CSV's column (with --file) and a one-fact
question whose web search is answered by a fake web on loopback (tests/support/fake_web.py). Each runs
`gaia-mas ask -v` with a fresh HOME and no key; for each the script prints the wall time, the agents in the order they
ran, the tool calls and the answer (from the run's log).
"""
from __future__ import annotations
import argparse, json, os, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT/"tests"/"support"))
from fake_web import fake_web  # noqa: E402
from local_model import local_model_server  # noqa: E402

CSV = "item,amount\npen,12\nbook,30\nlamp,45\n"
QUESTIONS = [("product", "What is 1234 times 5678?", None),
             ("csv sum", "What is the total of the amount column in the attached file?", "sales.csv"),
             ("one fact", "What is the capital of France?", None)]


def ask(base_url:str, question:str, file:str|None, home:Path, web_env:dict, extra:list) -> dict:
    "Run `gaia-mas ask -v` once; its exit code, output, wall time and the log's task_end record."
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TAVILY_", "GAIA_MAS_"))}
    env |= {"HOME": str(home), "OPENAI_BASE_URL": base_url, "OPIK_TRACK_DISABLE": "true", **web_env}
    cmd = [str(Path(sys.executable).parent/"gaia-mas"), "ask", question, "-v", *(["--file", file] if file else []), *extra]
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=home, timeout=900)
    took = time.monotonic() - t0
    logs = sorted((home/".cache"/"gaia_mas"/"logs").glob("ask-*.jsonl"), key=os.path.getmtime)
    end = next((json.loads(l) for l in reversed(logs[-1].read_text().splitlines()) if '"task_end"' in l), {}) if logs else {}
    return {"exit": r.returncode, "stdout": r.stdout, "stderr": r.stderr, "seconds": took, "end": end}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base-url", help="a running local model server (default: start serve.py for the run)")
    ap.add_argument("--show", action="store_true", help="also print each run's output")
    a, extra = ap.parse_known_args(argv)
    with tempfile.TemporaryDirectory() as tmp, fake_web() as (web, web_env), \
         (local_model_server() if not a.base_url else _given(a.base_url)) as url:
        (Path(tmp)/"sales.csv").write_text(CSV)
        for name, question, file in QUESTIONS:
            home = Path(tmp)/name.replace(" ", "_"); home.mkdir()
            run = ask(url, question, file and str(Path(tmp)/file), home, web_env, extra)
            path = run["end"].get("path") or {}
            print(f"{name}: {run['seconds']:.0f} s, exit {run['exit']}, agents {' > '.join(path.get('agents', []))}, "
                  f"{path.get('tool_calls', 0)} tool calls, answer {run['stdout'].strip().splitlines()[-1:] or ['']}",
                  flush=True)
            if a.show: print(run["stdout"], run["stderr"][-2000:], sep="\n")
    return 0


class _given:
    "A context manager that yields a given base URL."
    def __init__(self, url): self.url = url
    def __enter__(self): return self.url
    def __exit__(self, *exc): pass


if __name__ == "__main__": sys.exit(main())
