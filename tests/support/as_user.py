"Run Python with gaia_mas as a real user who is not root, as most users are (the tests themselves often run as root)."
import contextlib, os, pwd, shutil, subprocess, sys, tempfile
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = ("import subprocess, sys, gaia_mas.gaia.tools.sandbox\n"
         "subprocess.run([sys.executable, '-c', ''], check=True)  # the interpreter itself, not just a link to it\n"
         "print(sys.version_info[:2])")


def _user_python(home:Path) -> tuple[list, dict]:
    "(command, environment) that run Python with gaia_mas as a user who is not root, `home` theirs; else skip."
    if os.geteuid(): return [sys.executable], {}
    if not shutil.which("setpriv"): pytest.skip("root without setpriv (util-linux) cannot become another user")
    uid = next((u.pw_uid for u in pwd.getpwall() if 1000 <= u.pw_uid < 60000), 65534)
    os.chown(home, uid, uid)
    become = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    paths = os.pathsep.join([str(ROOT), *(p for p in sys.path if p.endswith(("site-packages", "dist-packages")))])
    for python, env in [(sys.executable, {}), ("/usr/bin/python3", {"PYTHONPATH": paths})]:
        probe = subprocess.run([*become, python, "-c", PROBE],
                               env={"PATH": os.environ["PATH"], "HOME": str(home), **env}, cwd=home,
                               capture_output=True, text=True, timeout=120)
        if probe.returncode == 0 and probe.stdout.strip() == str(tuple(sys.version_info[:2])): return [*become, python], env
    pytest.skip(f"no Python {sys.version_info[0]}.{sys.version_info[1]} here that uid {uid} may run with gaia_mas "
                "(this one lives in a folder only root may enter)")


@contextlib.contextmanager
def as_user():
    "Yield (home, run): a fresh home owned by a user who is not root, and `run(args, env)`, Python with gaia_mas as them."
    home = Path(tempfile.mkdtemp(prefix="gaia_user_"))  # not under tmp_path: only root may enter pytest's folders
    try:
        command, extra = _user_python(home)
        def run(args:list, env:dict|None=None, timeout:float=180) -> subprocess.CompletedProcess:
            env = {"PATH": os.environ["PATH"], "HOME": str(home), "OPIK_TRACK_DISABLE": "true", **extra, **(env or {})}
            return subprocess.run([*command, *args], env=env, cwd=home, capture_output=True, text=True, timeout=timeout)
        yield home, run
    finally: shutil.rmtree(home, ignore_errors=True)
