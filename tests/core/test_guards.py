"""A parsing worker must never keep a process from exiting: not the main process, and not a multiprocessing child
(nbdev_test runs notebooks in a pool of them), which skips atexit handlers but waits for its own children."""
import multiprocessing, subprocess, sys, textwrap
import pytest

pytestmark = [pytest.mark.subprocess, pytest.mark.security]


def _child():
    from gaia_mas.core.guards import Isolated
    assert Isolated()(len, "abc") == 3  # the worker is started and left running


def test_a_multiprocessing_child_with_a_worker_exits():
    p = multiprocessing.get_context("fork").Process(target=_child)
    p.start(); p.join(60)
    hung = p.is_alive()
    if hung: p.kill(); p.join()
    assert not hung, "the child waited for its parsing worker at exit"
    assert p.exitcode == 0


def test_a_script_with_a_worker_exits():
    code = textwrap.dedent("""
        from gaia_mas.core.guards import Isolated
        print(Isolated()(len, "abcd"))
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout.strip()) == (0, "4"), r.stderr
