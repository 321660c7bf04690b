"Helpers of the gaia-mas process tests: the CLI as a subprocess, offline and with tracing disabled."
import os, subprocess, sys
from pathlib import Path
import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO.parent/"shared"/"fixtures"/"gaia-l1-origin-run.jsonl"
GAIA = [sys.executable, "-c", "import sys; from gaia_mas.cli import main; sys.exit(main())"]


def cli_env(**extra) -> dict:
    "The environment of a CLI subprocess: no API key, no tracing, no proxy."
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GAIA_MAS_SCRIPTED")}
    return {**env, "OPIK_TRACK_DISABLE": "true", "NO_PROXY": "127.0.0.1,localhost", **extra}


def newcomer_env(home, **extra) -> dict:
    "The environment of a new user: HOME is `home` (made empty), no cache or knowledge-base setting, no key."
    home.mkdir(parents=True, exist_ok=True)
    drop = ("GAIA_MAS_CACHE", "GAIA_MAS_KB", "GAIA_MAS_SESSIONS", "XDG_CACHE_HOME", "GAIA_MAS_EMBEDDINGS")
    return {k: v for k, v in cli_env(HOME=str(home), **extra).items() if k not in drop or k in extra}


def gaia(*args, timeout=120, **kw) -> subprocess.CompletedProcess:
    "Run `gaia-mas ARGS` in a subprocess and wait for it."
    return subprocess.run([*GAIA, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=cli_env(), **kw)


@pytest.fixture
def dry(tmp_path):
    "The options of a dry run whose checkpoints and logs stay in the test's folder."
    return ["--provider", "scripted", "--cache-dir", str(tmp_path/"cache")]
