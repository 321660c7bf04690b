"""The README is a test: every `sh` and `python` block of it runs as written, in order, as a new user would type them
in one terminal. They run in a temporary folder that holds the checkout (symbolic links to its files, so that what the
commands write lands there), with a fresh HOME, no GAIA_MAS_CACHE and no variable beyond PATH, HOME and LANG except
those the README itself exports.

- The blocks are read from nbs/index.ipynb through tools/readme.py, so a notebook edit that breaks a command fails
  here even before README.md is rebuilt from it.
- A block marked `not run` (it needs a key, an account, the network or a team's server) is skipped, and the list of
  those is printed. `make install` and `make test` are among them: they are CI's own first and last steps.
- A block marked `exit 1 with "TEXT"` may also end with status 1 when its output holds TEXT: an outcome the README
  describes (the tiny local model may give no answer).
- A block marked `server URL` starts in the background, as in a second terminal; the blocks after it run once that URL
  answers, and every server is stopped at the end.
- A command that another test already runs word for word against the same kind of server (COVERED) is left out of
  its block, and named: the local model takes tens of seconds an answer, and one run of each command is enough.
- Consecutive Python blocks run in one interpreter, as the cells of one notebook (tests/support/run_blocks.py), with
  the `python` the terminal has at that point; where the README shows a block's value, that value must come out.
"""
import contextlib, importlib.util, json, os, signal, subprocess, sys, time, urllib.error, urllib.parse, urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUN_BLOCKS = ROOT/"tests"/"support"/"run_blocks.py"
BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
BLOCK_TIMEOUT, SERVER_START = 900, 300  # seconds: a block (the local model answers slowly); a server to answer
# README commands that another test runs as written, as a new user, against the local model: {command: that test}
COVERED = {'gaia-mas ask "What is 1234 times 5678?" -v':
           "tests/gaia/test_cli_real_server.py::test_three_questions_walk_the_whole_path"}


def readme_tool():
    "tools/readme.py as a module."
    spec = importlib.util.spec_from_file_location("readme_tool", ROOT/"tools"/"readme.py")
    mod = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def answers(url:str) -> bool:
    "Whether an HTTP server answers at `url` (any status below 500)."
    try:
        with urllib.request.urlopen(url, timeout=5) as r: return r.status < 500
    except urllib.error.HTTPError as e: return e.code < 500
    except (OSError, ValueError): return False


class Terminal:
    "One user's shell: exported variables and the working folder carry over from block to block."
    def __init__(self, folder:Path, home:Path, state:Path):
        self.env, self.cwd, self.state, self.servers = {**BASE_ENV, "HOME": str(home)}, folder, state, []
        state.mkdir()

    def _fail(self, b, what:str, out:str):
        pytest.fail(f"README.md line {b.line} ({b.section}) {what}:\n{b.code}\n--- output (last 4000 characters)\n"
                    f"{out[-4000:]}", pytrace=False)

    def sh(self, b):
        "Run a shell block with `bash -e`, but for its COVERED commands; keep what it exported and where it went."
        env_file, cwd_file = self.state/"env", self.state/"cwd"
        for line in b.code.splitlines():
            if line.strip() in COVERED: print(f"--- README.md line {b.line}: {line.strip()!r} is run by {COVERED[line.strip()]}")
        code = "\n".join(l for l in b.code.splitlines() if l.strip() not in COVERED)
        script = f"{code}\nenv -0 > '{env_file}'; pwd > '{cwd_file}'\n"
        r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=self.cwd, env=self.env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=BLOCK_TIMEOUT)
        print(f"--- README.md line {b.line}: exit {r.returncode}\n{r.stdout[-3000:]}")
        if r.returncode and not (r.returncode == 1 and b.exit1 and b.exit1 in r.stdout):
            self._fail(b, f"exited with {r.returncode}", r.stdout)
        self.env = dict(kv.split("=", 1) for kv in env_file.read_text().split("\0") if "=" in kv)
        self.cwd = Path(cwd_file.read_text().strip())

    def python(self, group:list):
        "Run consecutive Python blocks in one interpreter: the terminal's `python`."
        path = self.state/"blocks.json"
        path.write_text(json.dumps([{"code": b.code, "line": b.line, "output": b.output} for b in group]))
        r = subprocess.run(["bash", "-c", 'python "$0" "$1"', str(RUN_BLOCKS), str(path)], cwd=self.cwd, env=self.env,
                           text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=BLOCK_TIMEOUT)
        print(r.stdout[-3000:])
        if r.returncode: self._fail(group[0], "and the Python blocks after it failed", r.stdout)

    def server(self, b):
        "Start a server block in the background and wait until its URL answers."
        if answers(b.server): self._fail(b, f"cannot start: something already answers at {b.server}", "")
        log = open(self.state/f"server-{b.line}.log", "w")
        proc = subprocess.Popen(["bash", "-e", "-c", b.code], cwd=self.cwd, env=self.env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        self.servers.append((proc, log))
        end = time.monotonic() + SERVER_START
        while not answers(b.server):
            if proc.poll() is not None or time.monotonic() > end:
                self._fail(b, f"did not answer at {b.server}", (self.state/f"server-{b.line}.log").read_text())
            time.sleep(1)
        print(f"--- README.md line {b.line}: serving {b.server}")

    def stop(self):
        "Stop every server started, newest first."
        for proc, log in reversed(self.servers):
            with contextlib.suppress(ProcessLookupError): os.killpg(proc.pid, signal.SIGTERM)
            try: proc.wait(30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError): os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
            log.close()


def checkout_in(folder:Path) -> Path:
    "`folder`, holding the checkout's files as symbolic links."
    folder.mkdir()
    for p in ROOT.iterdir():
        if p.name != ".git": (folder/p.name).symlink_to(p)
    return folder


@pytest.mark.timeout(1800)  # a block may wait BLOCK_TIMEOUT for the local model on a busy machine
@pytest.mark.slow
@pytest.mark.real_server  # the README starts the local model and the service
def test_readme_runs_as_written(tmp_path, capsys):
    if not (ROOT/".venv"/"bin"/"activate").exists():
        pytest.skip("the README's commands run in the checkout's .venv: run make install first")
    tool = readme_tool()
    blocks = tool.blocks(tool.render(ROOT))
    assert len(blocks) >= 6 and any(b.server for b in blocks), "the README's blocks were not found"
    with capsys.disabled():
        skipped = [b for b in blocks if b.skip]
        print(f"\nREADME.md: {len(blocks) - len(skipped)} of {len(blocks)} blocks run; not run offline:")
        for b in skipped: print(f"  line {b.line} ({b.section}): {b.skip}")
    home = tmp_path/"home"; home.mkdir()
    term, group = Terminal(checkout_in(tmp_path/"work"), home, tmp_path/"state"), []
    try:
        for b in blocks + [None]:
            if b is not None and b.skip: continue
            if b is not None and b.lang == "python": group.append(b); continue
            if group: term.python(group); group = []
            if b is None: break
            term.server(b) if b.server else term.sh(b)
    finally: term.stop()
