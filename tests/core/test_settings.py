"""The README's table of variables is the one the settings object makes, in the notebook and in README.md, so the two
cannot drift apart; every variable a library module names is a setting."""
import json, re
from pathlib import Path

from gaia_mas.core.settings import Settings, env_names, settings_table

ROOT = Path(__file__).resolve().parents[2]


def test_readme_table_is_the_settings_table():
    index = "\n".join("".join(c["source"]) for c in json.loads((ROOT/"nbs"/"index.ipynb").read_text())["cells"])
    assert settings_table() in index, "run: python -c 'from gaia_mas.core.settings import settings_table' (see nbs/index.ipynb)"
    assert settings_table() in (ROOT/"README.md").read_text(), "run python tools/readme.py"


def test_every_variable_the_library_names_is_a_setting():
    known = {n for f in Settings.model_fields for n in env_names(f)}
    internal = {"GAIA_MAS_SANDBOX_SESSION"}   # a marker written into the sandbox's own environment, never read back
    named = {m for p in (ROOT/"gaia_mas").rglob("*.py") for m in re.findall(r"GAIA_MAS_[A-Z0-9_]*[A-Z0-9]", p.read_text())}
    assert named - known - internal == set()
