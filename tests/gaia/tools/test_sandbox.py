"""Replays the attacks on the sandbox: model-written Python, under bubblewrap and in the unisolated fallback.

Every test is bounded in time (session limits, subprocess time-outs, watchdog threads) and cleans up what it starts.
"""
import contextvars, json, logging, os, secrets, shutil, socket, subprocess, sys, textwrap, threading, time
import pytest
from gaia_mas.gaia.tools import sandbox as sb
from gaia_mas.gaia.tools.sandbox import PythonSession, SandboxError
from gaia_mas.gaia.tools.expert_tools import python_repl_tool, python_session
from gaia_mas.core.utils import deadline_scope
from cli_support import GAIA, newcomer_env
from as_user import as_user

pytestmark = [pytest.mark.subprocess, pytest.mark.security]

BWRAP_PROBLEM = sb._bwrap_problem(shutil.which("bwrap") or "")
needs_bwrap = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=f"bubblewrap unavailable: {BWRAP_PROBLEM}")
CANARIES = {"OPENAI_API_KEY": "sk-canary-openai-1f2e3d", "TAVILY_API_KEY": "tvly-canary-4c5b6a"}

@pytest.fixture(params=["bwrap", "process"])
def mode(request, monkeypatch):
    "Each test runs under bubblewrap (skipped only where it is missing) and under the explicit process fallback."
    if request.param == "bwrap" and BWRAP_PROBLEM: pytest.skip(f"bubblewrap unavailable: {BWRAP_PROBLEM}")
    monkeypatch.setenv("GAIA_MAS_SANDBOX", request.param)
    return request.param

@pytest.fixture
def bwrap(monkeypatch):
    if BWRAP_PROBLEM: pytest.skip(f"bubblewrap unavailable: {BWRAP_PROBLEM}")
    monkeypatch.setenv("GAIA_MAS_SANDBOX", "bwrap")

@pytest.fixture
def keys(monkeypatch):
    "Fake API keys in the runner's environment."
    for k, v in CANARIES.items(): monkeypatch.setenv(k, v)

def live_with(text:str) -> list:
    "Live processes on the host whose command line holds `text`."
    found = []
    for pid, (_, state, _, _) in sb._proc_table().items():
        if state == "Z" or pid == os.getpid(): continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if text.encode() in f.read(): found.append(pid)
        except OSError: continue
    return found

def wait_for(cond, seconds:float=20):
    "Poll `cond` until it is true or `seconds` pass; return its last value."
    end = time.monotonic() + seconds
    while not (v := cond()) and time.monotonic() < end: time.sleep(0.05)
    return v

def bounded(f, seconds:float=60):
    "Run `f` in a thread; fail (instead of hanging) when it has not returned within `seconds`."
    out, ctx = {}, contextvars.copy_context()  # the thread sees the caller's deadline
    t = threading.Thread(target=lambda: out.setdefault("v", ctx.run(f)), daemon=True); t.start(); t.join(seconds)
    assert not t.is_alive(), f"still running after {seconds} s"
    return out["v"]

# --- secrets and the runner ---------------------------------------------------------------------------------

def test_code_cannot_see_api_keys(mode, keys):
    with PythonSession(timeout=20) as s:
        out = s.run("import os; print(dict(os.environ)); print(open('/proc/self/environ').read())")
        if mode == "bwrap":  # every process it can see
            out += s.run("import os, glob\nfor p in glob.glob('/proc/[0-9]*/environ'):\n"
                         "    try: print(open(p).read())\n    except OSError: pass")
    assert "HOME" in out and "PATH" in out
    for v in CANARIES.values(): assert v not in out

ATTACKS = """
import json, os, signal, sys
from gaia_mas.gaia.tools.sandbox import PythonSession
with PythonSession(timeout=20) as s:
    out = [s.run("import os; os.kill(os.getppid(), 9)"), s.run("import os; os.kill(%(pid)d, 9)"),
           s.run("import os; os.kill(-1, 9)"), s.run("import os; os.killpg(0, 9)"),
           s.run("import os; print(open('/proc/%(pid)d/environ').read())"), s.run("print(6 * 7)")]
print(json.dumps(out))
"""

@needs_bwrap
def test_code_cannot_kill_or_read_the_runner(tmp_path):
    "The batch runs in a child process here, so a kill that works would show as that child dying."
    env = os.environ | CANARIES | {"GAIA_MAS_SANDBOX": "bwrap"}
    runner = subprocess.Popen([sys.executable, "-c", "import sys, time; sys.stdin.read()"], stdin=subprocess.PIPE, env=env)
    try:
        p = subprocess.run([sys.executable, "-c", ATTACKS % dict(pid=runner.pid)], env=env, capture_output=True, text=True,
                           timeout=120, cwd=tmp_path)
        assert p.returncode == 0, p.stderr[-2000:]
        out = json.loads(p.stdout.strip().splitlines()[-1])
        assert runner.poll() is None  # a process the code was told the pid of
        assert "ProcessLookupError" in out[1] and "FileNotFoundError" in out[4]
        test_text = "\n".join(out)
        for v in CANARIES.values(): assert v not in test_text
        assert out[-1] == "42"
    finally: runner.kill(); runner.wait()

@needs_bwrap
def test_code_cannot_read_or_write_outside_scratch(bwrap, tmp_path):
    (tmp_path / "secret.txt").write_text("canary-file-7a8b")
    home = os.path.expanduser("~")
    with PythonSession(timeout=20) as s:
        code = textwrap.dedent(f"""
            import os
            for what, f in [("read", lambda: open({str(tmp_path / 'secret.txt')!r}).read()),
                            ("ssh", lambda: os.listdir({home + '/.ssh'!r})),
                            ("write", lambda: open({str(tmp_path / 'pwned')!r}, "w").write("x")),
                            ("system", lambda: open("/usr/pwned", "w").write("x")),
                            ("project", lambda: open({os.getcwd() + '/pwned'!r}, "w").write("x"))]:
                try: print(what, "worked", f())
                except OSError as e: print(what, "refused", type(e).__name__)
            open("mine.txt", "w").write("ok"); print(open("mine.txt").read())""")
        out = s.run(code)
        assert s.run("import os; os.path.exists('mine.txt')") == "True"
    assert "read refused" in out and "ssh refused" in out and "canary-file-7a8b" not in out and out.endswith("ok")
    assert not (tmp_path / "pwned").exists() and not os.path.exists(os.getcwd() + "/pwned")

@needs_bwrap
def test_no_network_not_even_loopback(bwrap):
    with socket.socket() as server, PythonSession(timeout=20) as s:
        server.bind(("127.0.0.1", 0)); server.listen(); server.settimeout(0.5)
        out = s.run(f"import socket\ntry: socket.create_connection(('127.0.0.1', {server.getsockname()[1]}), timeout=3); print('connected')\n"
                    "except OSError as e: print('refused', type(e).__name__)")
        with pytest.raises(socket.timeout): server.accept()
    assert out.startswith("refused")

@needs_bwrap
def test_attachment_is_the_only_file_visible(bwrap, tmp_path):
    (tmp_path / "task.txt").write_text("attached"); (tmp_path / "metadata.jsonl").write_text('{"Final answer": "gold-canary-55"}')
    with python_session({"file": str(tmp_path / "task.txt")}):
        assert python_repl_tool.invoke(f"open({str(tmp_path / 'task.txt')!r}).read()") == "'attached'"
        out = python_repl_tool.invoke(f"import os; print(os.listdir({str(tmp_path)!r}))\n"
                                      f"print(open({str(tmp_path / 'metadata.jsonl')!r}).read())")
        denied = python_repl_tool.invoke(f"open({str(tmp_path / 'task.txt')!r}, 'a').write('x')")
    assert "['task.txt']" in out and "FileNotFoundError" in out and "gold-canary-55" not in out
    assert "Errno" in denied and (tmp_path / "task.txt").read_text() == "attached"

@needs_bwrap
@pytest.mark.parametrize("attached", ["metadata.jsonl", "answers.txt", "link.txt"])
def test_gold_attachment_is_never_bound(bwrap, tmp_path, attached):
    "A task whose 'attachment' is GAIA's gold file (by name, by content, or through a link) runs without it, and says why."
    gold = tmp_path / "metadata.jsonl"
    gold.write_text('{"task_id": "t1", "Question": "?", "Final answer": "gold-canary-91"}\n')
    if attached == "answers.txt": (tmp_path / attached).write_text(gold.read_text())
    if attached == "link.txt": (tmp_path / attached).symlink_to(gold)
    path = str(tmp_path / attached)
    with python_session({"file": path}) as s:
        out = python_repl_tool.invoke(f"print(open({path!r}).read())")
        assert s.files == []
    assert "gold-canary-91" not in out and "FileNotFoundError" in out
    assert out.startswith(f"Note: {attached} is not readable here") and "tools never read gold answers" in out

# --- processes -----------------------------------------------------------------------------------------------

def test_setsid_orphans_and_group_are_killed_on_close(mode):
    mark = f"gaia-orphan-{secrets.token_hex(4)}"
    code = textwrap.dedent(f"""
        import os, subprocess, sys
        sleeper = [sys.executable, "-c", "import time; time.sleep(120)", {mark!r}]
        subprocess.Popen(sleeper)                               # same group
        subprocess.Popen(sleeper, start_new_session=True)      # own session
        pid = os.fork()
        if pid == 0:                                           # double fork: an orphan in its own session, empty env
            os.setsid()
            if os.fork() == 0: os.execve(sys.executable, sleeper, {{}})
            os._exit(0)
        os.waitpid(pid, 0)
        print("started")""")
    with PythonSession(timeout=20) as s:
        assert s.run(code) == "started"
        assert len(wait_for(lambda: len(live_with(mark)) == 3 and live_with(mark))) == 3
    assert wait_for(lambda: not live_with(mark), 10), live_with(mark)

def test_timeout_kills_everything(mode):
    mark = f"gaia-timeout-{secrets.token_hex(4)}"
    code = (f"import os, subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', 'import os, time; os.setsid(); time.sleep(120)', {mark!r}])\n"
            "time.sleep(120)")
    with PythonSession(timeout=3) as s:
        out = bounded(lambda: s.run(code))
        assert "ran longer than 3 s" in out
        assert wait_for(lambda: not live_with(mark), 10)
        assert s.run("1 + 1") == "2"

def test_partial_output_cannot_block_the_reader(mode):
    "One byte on every descriptor of the worker, then sleep: the call still ends at its limit."
    code = ("import os, time\nfor fd in map(int, os.listdir('/proc/self/fd')):\n"
            "    try: os.write(fd, b'x') if fd > 2 else None\n    except OSError: pass\ntime.sleep(120)")
    with PythonSession(timeout=3) as s:
        assert "ran longer than 3 s" in bounded(lambda: s.run(code))
        assert s.run("'fresh'") == "'fresh'"

def test_forked_child_cannot_fake_or_block_a_reply(mode):
    code = ("import os, time\nif os.fork() == 0:\n"
            "    for fd in range(3, 64):\n        try: os.write(fd, b'{\"fake\": 1}')\n        except OSError: pass\n"
            "    time.sleep(30); os._exit(0)\ntime.sleep(0.5)\n'real'")
    with PythonSession(timeout=10) as s:
        assert bounded(lambda: s.run(code)) == "'real'"
        assert s.run("6 * 7") == "42"

def test_question_deadline_bounds_the_call(mode):
    with PythonSession(timeout=60) as s, deadline_scope(1.5):
        assert "s and was stopped" in bounded(lambda: s.run("import time; time.sleep(120)"), 30)

FORK_BOMB = ("import os, time\nn = 0\nfor _ in range(5000):\n    try: pid = os.fork()\n    except OSError: break\n"
             "    if pid == 0: time.sleep(60); os._exit(0)\n    n += 1\nprint(n)")

@pytest.mark.parametrize("m", ["bwrap", "process"])
def test_fork_bomb_is_bounded(m, monkeypatch):
    "The process limit stops the loop (or, where the kernel counts a shared user, the budget's watch stops the sandbox)."
    if m == "bwrap" and BWRAP_PROBLEM: pytest.skip(f"bubblewrap unavailable: {BWRAP_PROBLEM}")
    if m == "process" and os.geteuid() == 0:  # the kernel exempts root from RLIMIT_NPROC: the test below runs it as a user
        pytest.skip("the kernel exempts root from RLIMIT_NPROC; only bwrap (which drops to nobody) bounds it")
    monkeypatch.setenv("GAIA_MAS_SANDBOX", m)
    with PythonSession(timeout=30) as s:
        out = bounded(lambda: s.run(FORK_BOMB))
        marker = s.marker
        assert (out.isdigit() and int(out) <= 32) or "over the budget of 32" in out, out
    assert wait_for(lambda: not sb._marked(marker), 10)
    assert subprocess.run(["true"], timeout=10).returncode == 0  # the runner can still start processes

def test_memory_and_file_size_limits(mode):
    with PythonSession(timeout=20, memory_mb=300, file_mb=1) as s:
        assert "memory limit" in s.run("x = bytearray(2 * 2**30)")
        assert "File too large" in s.run("open('big', 'wb').write(b'x' * 2 * 2**20)")
        assert s.run("'alive'") == "'alive'"

# --- choosing the sandbox --------------------------------------------------------------------------------------

def test_forced_bwrap_without_bwrap_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path)); monkeypatch.setenv("GAIA_MAS_SANDBOX", "bwrap")
    with pytest.raises(SandboxError, match="which cannot run here: bwrap is not installed"):
        with PythonSession() as s: s.run("1")
    assert python_repl_tool.invoke("1").startswith("Error: GAIA_MAS_SANDBOX=bwrap")
    with pytest.raises(SandboxError, match="apt-get install bubblewrap"): sb.sandbox_mode()
    monkeypatch.setenv("GAIA_MAS_SANDBOX", "docker")
    with pytest.raises(SandboxError, match="not one of bwrap, process"): sb.sandbox_mode()

def test_fallback_says_once_that_code_runs_unisolated(monkeypatch, tmp_path, caplog, capsys, keys):
    monkeypatch.setenv("PATH", str(tmp_path)); monkeypatch.delenv("GAIA_MAS_SANDBOX", raising=False)
    monkeypatch.setattr(sb, "_told", [])
    with caplog.at_level(logging.WARNING, logger="gaia_mas.gaia.tools.sandbox"):
        with PythonSession(timeout=20) as s:
            out = s.run("import os; sorted(os.environ)") + s.run("print(1)")
        with PythonSession(timeout=20) as s: s.run("print(2)")
    warnings = [r for r in caplog.records if "UNISOLATED" in r.getMessage()]
    assert len(warnings) == 1 and "bwrap is not installed" in warnings[0].getMessage()
    assert [l for l in capsys.readouterr().err.splitlines() if "UNISOLATED" in l] == [warnings[0].getMessage()]
    assert "OPENAI_API_KEY" not in out and "HOME" in out

def test_binds_under_tmp_are_mounted_after_tmp(monkeypatch):
    "bwrap mounts in order: a venv, scratch folder or attachment under /tmp (CI clones there) must be bound after the tmpfs."
    monkeypatch.setattr(sb, "_python_dirs", lambda: ["/tmp/ci/repo/.venv", "/usr/local"])
    cmd = sb._bwrap_command("bwrap", ["/tmp/ci/in/task.txt"])
    tmpfs = cmd.index("/tmp") - 1
    under = [i for i, a in enumerate(cmd) if a in ("--bind", "--ro-bind", "--dir") and cmd[i + 1].startswith("/tmp/")]
    assert {cmd[i + 1] for i in under} >= {"/tmp/ci/repo/.venv", sb.SCRATCH, "/tmp/ci/in/task.txt"}
    assert all(i > tmpfs for i in under)

def test_fallback_warning_says_why_bwrap_failed(monkeypatch, caplog):
    "When bwrap is installed but its probe fails, the one warning carries the probe's error, not 'install bubblewrap'."
    monkeypatch.delenv("GAIA_MAS_SANDBOX", raising=False); monkeypatch.setattr(sb, "_told", [])
    monkeypatch.setattr(sb, "_bwrap_problem", lambda b: "bwrap failed: bwrap: execvp /tmp/x/.venv/bin/python: No such file")
    with caplog.at_level(logging.WARNING, logger="gaia_mas.gaia.tools.sandbox"): assert sb.sandbox_mode() == "process"
    msg = " ".join(r.getMessage() for r in caplog.records)
    assert "execvp /tmp/x/.venv/bin/python" in msg and "Install bubblewrap" not in msg

# --- the runner's environment, for a user who is not root ------------------------------------------------------

EVERY_ENVIRON = """
import json, os
from gaia_mas.gaia.tools.sandbox import PythonSession
READ = ("import glob\\nfor p in sorted(glob.glob('/proc/[0-9]*/environ')):\\n"
        "    try: print(p, repr(open(p).read()))\\n    except OSError as e: print(p, 'refused', e.errno)")
with PythonSession(timeout=60) as s: out, mode = s.run(READ), s.mode
print(json.dumps({"uid": os.getuid(), "mode": mode, "out": out}))
"""

def test_no_process_in_the_sandbox_holds_the_runners_keys_for_a_user():
    "Run as a real non-root user (bwrap then makes a user namespace): every environ in the sandbox, bwrap's PID 1 included."
    with as_user() as (_, run):
        p = run(["-c", EVERY_ENVIRON], env=CANARIES)
        assert p.returncode == 0, p.stderr[-2000:]
        got = json.loads(p.stdout.strip().splitlines()[-1])
    assert got["uid"] != 0
    if got["mode"] != "bwrap": pytest.skip(f"bubblewrap cannot run for uid {got['uid']} here")
    assert "/proc/1/environ 'PATH=" in got["out"], got["out"]  # bwrap's init, readable by the code
    for v in CANARIES.values(): assert v not in got["out"]

FORK_BOMB_AS_USER = """
import json, os, sys, time
from gaia_mas.gaia.tools import sandbox
with sandbox.PythonSession(timeout=30) as s: out, marker, mode = s.run(sys.argv[1]), s.marker, s.mode
end = time.monotonic() + 10
while sandbox._marked(marker) and time.monotonic() < end: time.sleep(0.05)
print(json.dumps({"uid": os.getuid(), "mode": mode, "out": out, "left": len(sandbox._marked(marker))}))
"""

def test_fork_bomb_is_bounded_for_a_user_without_bubblewrap():
    "A user who is not root, in the unisolated fallback: the process limit counts their processes and stops the loop."
    with as_user() as (_, run):
        p = run(["-c", FORK_BOMB_AS_USER, FORK_BOMB], env={"GAIA_MAS_SANDBOX": "process"})
        assert p.returncode == 0, p.stderr[-2000:]
        got = json.loads(p.stdout.strip().splitlines()[-1])
    assert got["uid"] != 0 and got["mode"] == "process", got
    assert (got["out"].isdigit() and int(got["out"]) <= 32) or "over the budget of 32" in got["out"], got
    assert got["left"] == 0, got  # every child the loop made is gone
    assert p.stderr.count("UNISOLATED") == 1, p.stderr  # said once, also in a script that set up no logging
    assert subprocess.run(["true"], timeout=10).returncode == 0  # the runner can still start processes

# --- one budget for the whole sandbox ----------------------------------------------------------------------------

HOLD = ("import os, time\nfor i in range(5):\n    if os.fork() == 0: data = b'x' * 100 * 2**20; time.sleep(5); os._exit(0)\n"
        "time.sleep(5)\nprint('all held')")

def test_memory_budget_covers_every_process(mode):
    "Five children of 100 MB each under a budget of 300 MB: per-process limits alone would let them all hold it."
    with PythonSession(timeout=30, memory_mb=300) as s:
        out = bounded(lambda: s.run(HOLD))
        marker = s.marker
        assert "the sandbox was stopped: its processes held" in out and "over the budget of 300 MB" in out, out
        assert wait_for(lambda: not sb._marked(marker), 10)
        assert s.run("6 * 7") == "42"

SHARE = ("import os, time\ndata = b'x' * 150 * 2**20\nkids = []\nfor _ in range(3):\n    pid = os.fork()\n"
         "    if pid == 0: time.sleep(3); os._exit(0)\n    kids.append(pid)\n"
         "for k in kids: os.waitpid(k, 0)\nprint('shared', len(data) >> 20)")

def test_pages_a_fork_shares_count_once(mode):
    "A 150 MB worker that forks three children holds 150 MB, not 600: the budget of 300 MB is not passed."
    with PythonSession(timeout=30, memory_mb=300) as s:
        assert bounded(lambda: s.run(SHARE)) == "shared 150"

SCRATCH_RUNNER = """
import sys, time
from gaia_mas.gaia.tools.expert_tools import python_repl_tool, python_session
with python_session() as s:
    print(python_repl_tool.invoke(sys.argv[1]).replace("\\n", " | "), flush=True)
    print(s.marker, flush=True)
    time.sleep(600)
"""
FILL = ("n = 0\ntry:\n    for i in range(6):\n        with open(f'blob{i}', 'wb') as f:\n"
        "            for _ in range(100): f.write(b'x' * 2**20)\n        n += 1\n"
        "except OSError as e: print('stopped by errno', e.errno)\nprint('files of 100 MB:', n)")

def test_scratch_is_bounded_off_the_disk_and_gone_after_kill_9(bwrap, tmp_path):
    "Six files of 100 MB in one call meet the 256 MB scratch budget; nothing is on the host's disk, before or after kill -9."
    tmp = tmp_path/"tmp"; tmp.mkdir()
    runner = subprocess.Popen([sys.executable, "-c", SCRATCH_RUNNER, FILL], env=os.environ | {"TMPDIR": str(tmp)},
                              stdout=subprocess.PIPE, text=True)
    try:
        out, marker = bounded(runner.stdout.readline, 120).strip(), bounded(runner.stdout.readline, 30).strip()
        on_disk = sum(f.stat().st_size for f in tmp.rglob("*") if f.is_file())
        assert wait_for(lambda: sb._marked(marker), 10)  # the sandbox is alive, its files with it
    finally: runner.kill(); runner.wait()
    assert "stopped by errno 28" in out and "files of 100 MB: 2" in out, out  # ENOSPC at the budget
    assert on_disk == 0 and wait_for(lambda: not sb._marked(marker), 10) and list(tmp.iterdir()) == []

# --- unisolated is loud ------------------------------------------------------------------------------------------

def test_unisolated_run_says_so_once_and_can_refuse(tmp_path):
    "Without bubblewrap a run says so in one console line with the fix; --require-sandbox or GAIA_MAS_SANDBOX=bwrap refuse."
    (tmp_path/"bin").mkdir()  # a PATH without bwrap; the model's server is a closed port, so the question fails fast
    env = newcomer_env(tmp_path/"home", PATH=str(tmp_path/"bin"), OPENAI_BASE_URL="http://127.0.0.1:9/v1",
                       GAIA_MAS_BROWSER="0")
    env.pop("GAIA_MAS_SANDBOX", None)
    ask = [*GAIA, "ask", "What is 6 times 7?", "--max-retries", "0"]
    p = subprocess.run(ask, env=env, capture_output=True, text=True, timeout=300)
    lines = [l for l in p.stderr.splitlines() if "UNISOLATED" in l]
    assert len(lines) == 1 and "(bwrap is not installed)" in lines[0], p.stderr[-3000:]
    assert "sudo apt-get install bubblewrap" in lines[0] and "--require-sandbox" in lines[0]
    for flag, setting in [(["--require-sandbox"], {}), ([], {"GAIA_MAS_SANDBOX": "bwrap"})]:
        r = subprocess.run(ask + flag, env=env | setting, capture_output=True, text=True, timeout=300)
        assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr[-2000:])
        assert "cannot run here: bwrap is not installed" in r.stderr and "apt-get install bubblewrap" in r.stderr
        assert "UNISOLATED" not in r.stderr
