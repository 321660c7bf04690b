"""The package's layers: a foundation (`gaia_mas.core`), two systems side by side (`gaia_mas.gaia`, `gaia_mas.rag`) that
never import each other, the library over them (`gaia_mas.api`), and the entry points on top (`gaia_mas.cli`,
`gaia_mas.entrypoints`). The contracts live in `.importlinter`; imports inside functions count, imports under
`if TYPE_CHECKING:` (which never run) do not."""
import shutil, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent

@pytest.mark.subprocess
def test_import_contracts_are_kept():
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    if not Path(exe).exists(): pytest.fail("lint-imports is missing: run make install (import-linter is a dev requirement)")
    out = subprocess.run([exe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "broken" in out.stdout and " 0 broken" in out.stdout

def test_no_import_cycles():
    "No two modules of gaia_mas import each other, directly or through others."
    import grimp
    g = grimp.build_graph("gaia_mas", exclude_type_checking_imports=True)
    mods = sorted(g.modules)
    cycles = [(a, b) for i, a in enumerate(mods) for b in mods[i + 1:]
              if g.find_shortest_chain(a, b) and g.find_shortest_chain(b, a)]
    assert cycles == [], cycles

def test_each_system_stands_on_the_foundation_only():
    import grimp
    g = grimp.build_graph("gaia_mas", exclude_type_checking_imports=True)
    for system, other in (("gaia_mas.gaia", "gaia_mas.rag"), ("gaia_mas.rag", "gaia_mas.gaia")):
        assert not g.chain_exists(system, other, as_packages=True), f"{system} imports {other}"
        assert not g.chain_exists(system, "gaia_mas.cli", as_packages=True)
        assert not g.chain_exists(system, "gaia_mas.entrypoints", as_packages=True)
        assert not g.chain_exists(system, "gaia_mas.api", as_packages=True)
    assert not g.chain_exists("gaia_mas.core", "gaia_mas.gaia", as_packages=True)
    assert not g.chain_exists("gaia_mas.core", "gaia_mas.rag", as_packages=True)
