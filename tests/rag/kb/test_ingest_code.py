"""Code keeps its indentation through every reader and chunker: each file of nbs/samples/code (Markdown, HTML with
Pygments-highlighted `<pre>`, reStructuredText, a notebook, plain text) is ingested and searched with the rag commands,
and the stored passage holds the file's nested code line for line."""
import json
import pytest
from gaia_mas.cli import main
from gaia_mas.rag.kb.ingest import sample_dir

CODE = sample_dir().parent/"code"


def _block(text:str) -> list[str]:
    "The lines of the InventoryClient class as `text` holds them, from `class` to its last `return level`."
    lines = text.splitlines()
    first = next(i for i, l in enumerate(lines) if l.lstrip().startswith("class InventoryClient:"))
    last = max(i for i, l in enumerate(lines) if l.strip() == "return level")
    return lines[first:last + 1]


def _source_lines(name:str) -> list[str]:
    "The class as the file has it: for HTML and the notebook, the code their generator took from inventory.md."
    if name.endswith(".ipynb"):
        src = json.loads((CODE/name).read_text())["cells"][2]["source"]
        return _block(src if isinstance(src, str) else "".join(src))
    return _block((CODE/("inventory.md" if name.endswith(".html") else name)).read_text())


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    "The code samples ingested as a user would: `gaia-mas rag ingest`, text only."
    url = f"sqlite:///{tmp_path_factory.mktemp('code')/'kb.sqlite'}"
    files = [str(CODE/f"inventory.{x}") for x in ("md", "html", "rst", "ipynb", "txt")]
    assert main(["rag", "ingest", *files, "--kb", url, "--no-embed", "--no-progress"]) == 0
    return url


@pytest.mark.parametrize("ext", ["md", "html", "rst", "ipynb", "txt"])
def test_nested_code_is_stored_line_for_line(kb, ext, capsys):
    capsys.readouterr()
    code = main(["rag", "search", "stock_level breaker cache", "--kb", kb, "--mode", "keyword", "--json",
                 "--filter", f"filetype={ext}", "--k", "10"])
    hits = [json.loads(l) for l in capsys.readouterr().out.splitlines()]
    assert code == 0 and hits
    want = _source_lines(f"inventory.{ext}")
    stored = next((h["text"] for h in hits if "class InventoryClient:" in h["text"]), "")
    assert "\n".join(want) in stored, f"stored passage:\n{stored}\n\nsource lines:\n" + "\n".join(want)


@pytest.mark.parametrize("ext", ["md", "rst", "txt"])
def test_every_passage_is_whole_lines_of_the_file(kb, ext):
    "A passage of a text format is a run of the file's lines as written: no line loses its indentation, first or not."
    import sqlite3
    db = sqlite3.connect(kb.removeprefix("sqlite:///"))
    try: rows = [t for t, m in db.execute("select text, metadata from chunks") if json.loads(m)["filetype"] == ext]
    finally: db.close()
    text = "\n" + (CODE/f"inventory.{ext}").read_text() + "\n"
    assert rows and all(f"\n{t}\n" in text for t in rows), [t for t in rows if f"\n{t}\n" not in text]


def test_pdf_passages_end_lines_with_a_newline(tmp_path, capsys):
    "PDF text layers end lines with \\r\\n; the stored passage and the search output have plain \\n lines."
    from gaia_mas.core.readers import write_text_pdf
    lines = ["Retry budget", "Each call waits longer than the one before.", "The breaker opens after five failures."]
    pdf = write_text_pdf(tmp_path/"retries.pdf", ["\n".join(lines)])
    url = f"sqlite:///{tmp_path/'kb.sqlite'}"
    assert main(["rag", "ingest", str(pdf), "--kb", url, "--no-embed", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["rag", "search", "breaker opens", "--kb", url, "--mode", "keyword", "--json"]) == 0
    hits = [json.loads(l) for l in capsys.readouterr().out.splitlines()]
    assert hits and "\r" not in hits[0]["text"] and "\n".join(lines) in hits[0]["text"], hits


def test_a_file_named_ipynb_that_is_not_a_notebook_is_skipped_with_its_reason(tmp_path, capsys):
    "A broken .ipynb is one skipped file named as not a notebook; the other files of the batch are stored."
    (tmp_path/"broken.ipynb").write_text("{not json")
    url = f"sqlite:///{tmp_path/'kb.sqlite'}"
    code = main(["rag", "ingest", str(tmp_path/"broken.ipynb"), str(CODE/"inventory.md"), "--kb", url, "--no-embed",
                 "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0 and "1 added" in out and "1 skipped" in out, (out, err)
    assert "broken.ipynb: " in err and "not a Jupyter notebook" in err and "Traceback" not in err, err
