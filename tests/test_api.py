"""`gaia_mas` as a library: `import gaia_mas` loads none of the heavy libraries (the names load on first use), and the
quickstart, one import and at most three lines a system, runs offline with the scripted provider and the samples."""
import json, os, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("langchain_openai", "langchain_core", "langgraph", "numpy", "gaia_mas.api")

QUICKSTART = """
import gaia_mas

r = gaia_mas.answer("What is the capital of France?", provider="scripted")

records = gaia_mas.run("{samples}/gaia", out="results.jsonl", provider="scripted")
s = gaia_mas.score(records, gold="{samples}/gaia")

kb = gaia_mas.KnowledgeBase("kb.sqlite", embeddings="hash"); kb.ingest("{samples}/kb/docs")
hit = kb.search("circuit breaker half-open state", k=3)[0]

rag = gaia_mas.RagSystem(gaia_mas.KnowledgeBase.sample(), provider="scripted")
reply = rag.ask("When does the breaker close again?")

import json
print(json.dumps({{"answer": [r.answer, r.status, r.llm_calls], "records": len(records), "accuracy": s.accuracy,
                  "levels": s.levels, "hit": hit.source, "removed": kb.remove(hit.source),
                  "reply": [bool(reply.answer), len(reply.citations), reply.pattern]}}))
"""


def _env(tmp_path:Path) -> dict:
    "The environment of a fresh process: its own cache folder, no key, no model server."
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GAIA_MAS_SCRIPTED")}
    return {**env, "GAIA_MAS_CACHE": str(tmp_path/"cache"), "OPIK_TRACK_DISABLE": "true"}


@pytest.mark.subprocess
def test_import_gaia_mas_is_light(tmp_path):
    "A fresh `import gaia_mas` imports no LangChain, LangGraph or NumPy; the first name used brings its module."
    code = f"import sys, gaia_mas; print(sorted(m for m in {HEAVY} if m in sys.modules))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=_env(tmp_path))
    assert (r.returncode, r.stdout) == (0, "[]\n"), r.stderr
    code = "import sys, gaia_mas; gaia_mas.KnowledgeBase; print('gaia_mas.api' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=_env(tmp_path))
    assert r.stdout == "True\n", r.stderr


@pytest.mark.subprocess
@pytest.mark.timeout(600)  # a fresh process builds the sample collection and runs both systems' dry runs
def test_quickstart_runs_offline(tmp_path):
    "The quickstart, in a fresh process in an empty folder: both systems answer, with no key and no network."
    script = tmp_path/"quickstart.py"
    script.write_text(QUICKSTART.format(samples=ROOT/"nbs"/"samples"))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=540, cwd=tmp_path,
                       env=_env(tmp_path))
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["answer"][:2] == ["42", "ok"] and out["answer"][2] > 0
    tasks = [l for l in (ROOT/"nbs"/"samples"/"gaia"/"metadata.jsonl").read_text().splitlines() if l.strip()]
    assert out["records"] == len(tasks) and 0 <= out["accuracy"] <= 1 and out["levels"]
    assert out["hit"] == "docs/circuit-breakers.md" and out["removed"] == ["docs/circuit-breakers.md"]
    assert out["reply"][0] and out["reply"][1] > 0 and out["reply"][2] in ("sequential", "parallel", "supervisor")
    assert (tmp_path/"results.jsonl").exists() and (tmp_path/"kb.sqlite").exists()
