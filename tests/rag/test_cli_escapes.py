"""Terminal escapes in a document never reach the terminal: `rag ask` (text and --json) and `rag search` print a
passage that carries an OSC 52 clipboard write, a terminal reset (ESC c), a C1 CSI and a bidirectional override only
as escaped text."""
import json
import pytest

from cli_support import gaia

pytestmark = pytest.mark.subprocess

# OSC 52 sets the clipboard; ESC c resets the terminal; \x9b is CSI in one byte; U+202E reverses the text after it
EVIL = "Circuit breakers trip \x1b]52;c;cm0gLXJmIH4=\x07 after failures.\x1bc Then \x9b2J they \u202eesolc\u202c recover."
RAW = ("\x1b", "\x9b", "\u202e", "\x07")


@pytest.fixture
def evil_kb(tmp_path):
    (tmp_path/"docs").mkdir(); (tmp_path/"docs"/"breaker.md").write_text(f"# Circuit breakers\n\n{EVIL}\n")
    url = f"sqlite:///{tmp_path/'kb.sqlite'}"
    r = gaia("rag", "ingest", tmp_path/"docs", "--kb", url, "--embeddings", "hash")
    assert r.returncode == 0, r.stderr
    return url


@pytest.mark.security
@pytest.mark.parametrize("cmd", [("ask", "What do circuit breakers do?", "--provider", "scripted"),
                                 ("ask", "What do circuit breakers do?", "--provider", "scripted", "--json"),
                                 ("search", "circuit breakers"), ("search", "circuit breakers", "--json")],
                         ids=["ask", "ask-json", "search", "search-json"])
def test_escape_sequences_in_a_document_are_printed_escaped(evil_kb, cmd):
    r = gaia("rag", *cmd, "--kb", evil_kb)
    assert r.returncode == 0, r.stderr
    assert "52;c;cm0gLXJmIH4=" in r.stdout, r.stdout  # the passage is shown ...
    assert not any(c in r.stdout + r.stderr for c in RAW), repr(r.stdout)  # ... as text, not as escapes
    if "--json" in cmd:  # still JSON, whose strings hold the document's characters
        docs = [json.loads(r.stdout)] if cmd[0] == "ask" else [json.loads(l) for l in r.stdout.splitlines()]
        assert "\x9b2J" in json.dumps(docs, ensure_ascii=False)
