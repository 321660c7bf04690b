"""The settings guide shows the table of variables the settings object makes, drawn when the page is built, so the two
cannot drift apart, and the README keeps no copy of it; every variable a library module names is a setting."""
import json, re
from pathlib import Path

from gaia_mas.core.settings import Settings, env_names, settings_table

ROOT = Path(__file__).resolve().parents[2]


def test_the_settings_guide_draws_the_settings_table():
    cells = json.loads((ROOT/"nbs"/"guides"/"05_settings.ipynb").read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    assert any(src.rstrip().endswith("Markdown(settings_table())") for src in code), "the guide must draw the table"
    assert "| Variable | Default |" not in (ROOT/"README.md").read_text(), "the README keeps no copy of the table"
    assert settings_table().count("\n") + 1 == 2 + len(Settings.model_fields)


def test_every_variable_the_library_names_is_a_setting():
    known = {n for f in Settings.model_fields for n in env_names(f)}
    internal = {"GAIA_MAS_SANDBOX_SESSION"}   # a marker written into the sandbox's own environment, never read back
    named = {m for p in (ROOT/"gaia_mas").rglob("*.py") for m in re.findall(r"GAIA_MAS_[A-Z0-9_]*[A-Z0-9]", p.read_text())}
    assert named - known - internal == set()
