"""`gaia-mas config` as a user runs it: every setting in effect with where it came from, keys masked, an old name
warned about by its new name, and a bad value refused in one line."""
import json
import subprocess

import pytest

from cli_support import GAIA, cli_env

pytestmark = pytest.mark.subprocess


def config(*args, **env) -> subprocess.CompletedProcess:
    e = {k: v for k, v in cli_env(**env).items() if not k.startswith("GAIA_MAS_") or k in env}
    return subprocess.run([*GAIA, "config", *args], capture_output=True, text=True, timeout=120, env=e)


def test_config_shows_sources_and_masks_keys(tmp_path):
    r = config("--json", OPENAI_API_KEY="sk-test-secret", GAIA_MAS_CACHE_DIR=str(tmp_path), GAIA_MAS_TOOL_BUDGET="500")
    assert r.returncode == 0, r.stderr
    rows = {row["variable"]: row for row in json.loads(r.stdout)}
    assert rows["OPENAI_API_KEY"]["value"] == "**********" and "sk-test-secret" not in r.stdout + r.stderr
    assert rows["GAIA_MAS_CACHE"] | {"help": ""} == {"variable": "GAIA_MAS_CACHE", "value": str(tmp_path), "help": "",
        "source": "GAIA_MAS_CACHE_DIR (old name of GAIA_MAS_CACHE)", "default": rows["GAIA_MAS_CACHE"]["default"]}
    assert (rows["GAIA_MAS_TOOL_BUDGET"]["value"], rows["GAIA_MAS_TOOL_BUDGET"]["source"]) == ("500", "GAIA_MAS_TOOL_BUDGET")
    assert rows["GAIA_MAS_WEB_TIMEOUT"]["source"] == "default"
    assert "GAIA_MAS_CACHE_DIR is an old name: set GAIA_MAS_CACHE instead" in r.stderr


def test_config_text_and_a_bad_value():
    r = config()
    assert r.returncode == 0 and "GAIA_MAS_WEB_TIMEOUT" in r.stdout and "(default" in r.stdout, r.stderr
    r = config(GAIA_MAS_BROWSER="maybe")
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.startswith("gaia-mas: GAIA_MAS_BROWSER: Input should be a valid boolean") and r.stderr.count("\n") == 1


def test_config_says_what_each_command_does_with_no_key(tmp_path):
    "With no key, config says that ask refuses and that langgraph dev falls back to the scripted model; ask does refuse."
    r = config(GAIA_MAS_CACHE=str(tmp_path))
    assert r.returncode == 0, r.stderr
    said = r.stdout.split("No model key is set", 1)[1]
    ask_line = next(l for l in said.splitlines() if l.strip().startswith("gaia-mas ask"))
    assert "refuse" in ask_line and "--provider scripted" in ask_line, said
    assert "scripted model" in next(l for l in said.splitlines() if "langgraph dev" in l), said
    ask = subprocess.run([*GAIA, "ask", "What is 2 + 2?", "--memory"], capture_output=True, text=True, timeout=120,
                         env=cli_env(GAIA_MAS_CACHE=str(tmp_path)))
    assert ask.returncode == 2 and "OPENAI_API_KEY is not set" in ask.stderr and "--provider scripted" in ask.stderr
    keyed = config(OPENAI_API_KEY="sk-test-secret", GAIA_MAS_CACHE=str(tmp_path))
    assert "OPENAI_API_KEY is set: the commands that call a model use it" in keyed.stdout
    assert "sk-test-secret" not in keyed.stdout + keyed.stderr
