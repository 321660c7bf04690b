"What a `gaia-mas` command loads: the OpenAI SDK and langchain_openai only when a model talks to a server."
import subprocess, sys
import pytest

pytestmark = pytest.mark.subprocess

LOADED = "print(*(m in sys.modules for m in ('langchain_openai', 'openai')))"


def python(code:str, *args) -> list[str]:
    "Run `code` in a fresh Python, offline and untraced; the words of its last line."
    env = {"OPIK_TRACK_DISABLE": "true", "PATH": "/usr/bin:/bin", "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}
    r = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()[-1].split()


def test_scripted_ask_loads_no_openai(tmp_path):
    code = ("import sys; from gaia_mas.cli import main; "
            "c = main(['ask', 'q?', '--provider', 'scripted', '--dry-answer', 'FINAL ANSWER: 42', '--cache-dir', sys.argv[1]]); "
            + LOADED)
    assert python(code, tmp_path/"cache") == ["False", "False"]


def test_openai_names_still_import():
    code = ("import sys; from gaia_mas.core.llm import ModelServerUnreachable, ServerChatOpenAI, openai_llm_factory; "
            "import openai; print(issubclass(ModelServerUnreachable, openai.APIConnectionError), callable(openai_llm_factory))")
    assert python(code) == ["True", "True"]
