"What a `gaia-mas` command loads: the OpenAI SDK and langchain_openai only when a model talks to a server."
import json, subprocess, sys
import pytest

pytestmark = pytest.mark.subprocess

OPENAI = ("langchain_openai", "openai")
MAIN = ("import json, sys; from gaia_mas.cli import main\n"
        "try: rc = main(sys.argv[1:])\n"
        "except SystemExit as e: rc = e.code\n"
        f"print(json.dumps([rc, [m for m in {OPENAI!r} if m in sys.modules]]))")


def python(code:str, *args, cwd=None, home=None) -> str:
    "Run `code` in a fresh Python, offline and untraced, with no OpenAI key or server; the last line it prints."
    env = {"OPIK_TRACK_DISABLE": "true", "PATH": "/usr/bin:/bin", "OPENAI_API_KEY": "", "OPENAI_BASE_URL": "",
           **({"HOME": str(home)} if home else {})}
    r = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, env=env,
                       cwd=cwd, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()[-1]


def gaia_mas(tmp_path, *argv) -> tuple:
    "`gaia-mas *argv` run in a process of its own under a fresh HOME: its exit code and the OpenAI modules it loaded."
    rc, loaded = json.loads(python(MAIN, *argv, cwd=tmp_path, home=tmp_path/"home"))
    return rc, loaded


def test_scripted_ask_loads_no_openai(tmp_path):
    assert gaia_mas(tmp_path, "ask", "q?", "--provider", "scripted", "--dry-answer", "FINAL ANSWER: 42") == (0, [])


def test_scripted_run_loads_no_openai(tmp_path):
    (tmp_path/"split").mkdir()
    (tmp_path/"split"/"metadata.jsonl").write_text(json.dumps({"task_id": "s1", "Question": "What is 6 times 7?",
                                                               "Level": 1, "Final answer": "42"}) + "\n")
    assert gaia_mas(tmp_path, "run", "split", "--provider", "scripted", "--out", "res.jsonl") == (0, [])


def test_scripted_rag_ask_loads_no_openai(tmp_path):
    from gaia_mas.rag.kb.ingest import sample_dir
    kb = f"sqlite:///{tmp_path/'kb.sqlite'}"
    assert gaia_mas(tmp_path, "rag", "ingest", sample_dir()/"docs"/"idempotency.md", "--kb", kb, "--embeddings", "hash")[0] == 0
    assert gaia_mas(tmp_path, "rag", "ask", "What is idempotency?", "--provider", "scripted", "--kb", kb) == (0, [])


@pytest.mark.parametrize("argv", [("--help",), ("ask", "--help"), ("rag", "ask", "--help")], ids=" ".join)
def test_help_loads_no_openai(tmp_path, argv):
    assert gaia_mas(tmp_path, *argv) == (0, [])


def test_openai_names_still_import():
    code = ("import sys; from gaia_mas.core.llm import ModelServerUnreachable, ServerChatOpenAI, openai_llm_factory; "
            "import openai; print(issubclass(ModelServerUnreachable, openai.APIConnectionError), callable(openai_llm_factory))")
    assert python(code).split() == ["True", "True"]


def test_an_openai_model_loads_the_sdk_when_built():
    "llm_factory loads the OpenAI-bound module the first time it builds an `openai` model, and not before."
    code = ("import sys; from gaia_mas.core.llm import llm_factory; from gaia_mas.core.schema import AgentConfig; "
            "before = 'openai' in sys.modules; "
            "m = llm_factory(AgentConfig('planner', 'openai', 'm', 0.0, {'plan': str}, 'You plan.', base_url='http://127.0.0.1:9/v1')); "
            "print(before, type(m.bound).__name__, 'openai' in sys.modules)")
    assert python(code).split() == ["False", "ServerChatOpenAI", "True"]
