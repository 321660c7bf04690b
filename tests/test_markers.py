"""The markers mean what they say: tests/conftest.py fails a test that starts a process its markers do not name, and
names the marker to add. Run on a small test file in a pytest of its own, with the project's conftest."""
from pathlib import Path
import pytest

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.subprocess
CONFTEST = Path(__file__).with_name("conftest.py")

CASES = '''
import subprocess, sys
import pytest

def test_unmarked_program():
    subprocess.run(["true"], check=True)

@pytest.mark.subprocess
def test_marked_program():
    subprocess.run(["true"], check=True)

def test_unmarked_server():
    subprocess.run([sys.executable, "-c", "pass", "serve", "--port", "0"], check=True)

@pytest.mark.subprocess
def test_server_marked_as_a_mere_program():
    subprocess.run([sys.executable, "-c", "pass", "serve", "--port", "0"], check=True)

@pytest.mark.process
def test_marked_server():
    subprocess.run([sys.executable, "-c", "pass", "serve", "--port", "0"], check=True)

def test_in_process():
    assert sum([1, 2]) == 3
'''


def test_a_process_without_its_marker_fails_the_test(pytester):
    pytester.makeconftest(CONFTEST.read_text())
    pytester.makepyfile(test_cases=CASES)
    plugins_off = "-p no:opik -p no:langsmith_plugin -p no:schemathesis -p no:hypothesispytest".split()
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider", *plugins_off)  # as pytest.ini: a quick start
    r.assert_outcomes(passed=3, failed=3)
    out = r.stdout.str()
    assert "test_unmarked_program starts a process without its marker: add @pytest.mark.subprocess (it ran: true)" in out
    assert "test_unmarked_server starts a process without its marker: add @pytest.mark.process" in out
    assert "test_server_marked_as_a_mere_program starts a process without its marker: add @pytest.mark.process" in out
