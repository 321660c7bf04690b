"""Hostile documents against `gaia-mas rag ingest`: a YAML alias bomb, huge metadata, Office zip bombs, a file over the
per-file budget, documents faking their citations, and symlinks leading out of the ingested folder."""
import json, os, sqlite3, zipfile
from pathlib import Path
import pytest

from as_user import as_user
from rag_serve import run_measured

pytestmark = pytest.mark.security

BOMB = """---
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
---
# Hello
"""


def ingest(tmp_path, *paths, extra=()):
    return run_measured("rag", "ingest", *map(str, paths), "--kb", f"sqlite:///{tmp_path}/kb.sqlite", "--embeddings", "hash",
                        "--no-progress", *extra)


def chunks_meta(tmp_path) -> list[dict]:
    db = sqlite3.connect(tmp_path/"kb.sqlite")
    try: return [json.loads(m) for (m,) in db.execute("select metadata from chunks")]
    finally: db.close()


@pytest.mark.subprocess
def test_yaml_alias_bomb_is_refused(tmp_path):
    (tmp_path/"docs").mkdir(); (tmp_path/"docs"/"bomb.md").write_text(BOMB); (tmp_path/"docs"/"ok.md").write_text("# Ok\n\nfine text\n")
    p, peak, secs = ingest(tmp_path, tmp_path/"docs")
    print(f"alias bomb ({len(BOMB)} bytes): exit {p.returncode}, peak {peak:.0f} MiB, {secs:.1f}s; {p.stderr.strip()}")
    assert p.returncode == 0 and "YAML alias" in p.stderr and "1 added" in p.stdout and peak < 800
    assert "Traceback" not in p.stderr


@pytest.mark.subprocess
def test_metadata_values_are_capped(tmp_path):
    big = "---\nnote: " + "x" * 60_000 + "\ntags: [" + ",".join(f"t{i}" for i in range(500)) + "]\n---\n# T\n\ntext\n"
    (tmp_path/"big.md").write_text(big)
    p, _, _ = ingest(tmp_path, tmp_path/"big.md")
    meta = chunks_meta(tmp_path)
    size = max(len(json.dumps(m)) for m in meta)
    print(f"front matter of {len(big)} bytes: {size} bytes of metadata per chunk")
    assert p.returncode == 0 and size < 5_000 and len(meta[0]["tags"]) == 32


def _pptx(path:Path):
    import pptx
    prs = pptx.Presentation(); s = prs.slides.add_slide(prs.slide_layouts[1]); s.shapes.title.text = "Quarterly plan"
    prs.save(path)


@pytest.mark.subprocess
@pytest.mark.parametrize("kind", ["pptx", "docx"])
def test_office_zip_bomb_is_refused_before_parsing(tmp_path, kind):
    f = tmp_path/f"bomb.{kind}"
    if kind == "pptx": _pptx(f)
    else:
        import docx
        d = docx.Document(); d.add_paragraph("Quarterly plan"); d.save(f)
    with zipfile.ZipFile(f, "a", zipfile.ZIP_DEFLATED, compresslevel=1) as z, z.open("ppt/media/hidden.bin", "w", force_zip64=True) as m:
        zeros = bytes(2**24)
        for _ in range(128): m.write(zeros)  # 2 GiB of zeros, about 2 MB packed
    p, peak, secs = ingest(tmp_path, f)
    print(f"{kind} with a hidden 2 GiB member ({f.stat().st_size / 2**20:.1f} MiB): exit {p.returncode}, peak {peak:.0f} MiB, "
          f"{secs:.1f}s; {p.stderr.strip()}")
    assert p.returncode == 1 and "unpacks" in p.stderr and peak < 800 and "Traceback" not in p.stderr


@pytest.mark.subprocess
def test_one_file_over_the_budget_does_not_stop_the_ingest(tmp_path):
    from gaia_mas.core.guards import Budget
    from gaia_mas.rag.kb.ingest import ingest as ingest_files
    from gaia_mas.rag.kb.api import HashEmbeddings, open_kb
    (tmp_path/"docs").mkdir()
    with open(tmp_path/"docs"/"a-huge.txt", "w") as f:
        for _ in range(300): f.write("word " * 200_000 + "\n")  # 300 MB of text
    (tmp_path/"docs"/"b-small.md").write_text("# Small\n\nstill ingested\n")
    with open_kb(tmp_path/"kb.sqlite", HashEmbeddings()) as kb:
        rep = ingest_files(kb, [tmp_path/"docs"], budget=Budget(seconds=120, cpu_seconds=60, memory_mb=256))
    print(f"300 MB text file under a 256 MiB budget: skipped {rep.skipped}; added {rep.added}")
    assert [Path(p).name for p, _ in rep.skipped] == ["a-huge.txt"] and "budget" in rep.skipped[0][1]
    assert [Path(p).name for p in rep.added] == ["b-small.md"]


@pytest.mark.subprocess
def test_documents_cannot_fake_their_citations(tmp_path):
    from gaia_mas.rag.kb.api import open_kb
    d = tmp_path/"docs"; d.mkdir()
    (d/"memo.html").write_text('<html><head><title>Memo</title><meta name="source" content="/srv/ceo-memo.pdf">'
                               '<meta name="page" content="3"></head><body><h1>Memo</h1><p>The merger is off.</p></body></html>')
    (d/"note.md").write_text("# Note\n\nBudgets are frozen.\n")
    (d/"note.md.meta.json").write_text(json.dumps({"source": "/srv/ceo-memo.pdf", "title": "CEO memo", "page": 1,
                                                   "content_hash": "0" * 64, "team": "finance"}))
    p, _, _ = ingest(tmp_path, d)
    assert p.returncode == 0, p.stderr
    with open_kb(f"sqlite:///{tmp_path}/kb.sqlite") as kb:
        hits = kb.search("merger budgets", mode="keyword", k=5)
        assert {Path(h.source).name for h in hits} == {"memo.html", "note.md"}
        assert all("ceo-memo" not in h.citation and "p." not in h.citation for h in hits), [h.citation for h in hits]
        claimed = kb.filter_search({"user.source": "/srv/ceo-memo.pdf"}, k=5)  # the claims stay addressable as user tags
        assert {Path(h.source).name for h in claimed} == {"memo.html", "note.md"}
        assert kb.filter_search({"team": "finance"}, k=5)[0].metadata["title"] == "Note"
    rm = run_measured("rag", "rm", str(d/"note.md"), "--kb", f"sqlite:///{tmp_path}/kb.sqlite")[0]
    assert rm.returncode == 0 and "note.md" in rm.stdout


@pytest.mark.subprocess
def test_symlinks_leaving_the_tree_are_refused_and_reported(tmp_path):
    secret = tmp_path/"outside"/"secret.txt"; secret.parent.mkdir(); secret.write_text("the root password is hunter2")
    (tmp_path/"outside"/"more").mkdir(); (tmp_path/"outside"/"more"/"x.md").write_text("# X\n\nhunter2 again\n")
    d = tmp_path/"docs"; d.mkdir(); (d/"ok.md").write_text("# Ok\n\nfine\n")
    (d/"link.txt").symlink_to(secret); (d/"dirlink").symlink_to(tmp_path/"outside"/"more")
    (d/"inside.md").symlink_to(d/"ok.md")  # a link within the tree is fine
    p, _, _ = ingest(tmp_path, d)
    print(p.stderr)
    assert p.returncode == 0 and "link.txt" in p.stderr and "dirlink" in p.stderr and "--follow-links" in p.stderr
    assert not any("hunter2" in json.dumps(m) for m in chunks_meta(tmp_path))
    db = sqlite3.connect(tmp_path/"kb.sqlite")
    assert not db.execute("select 1 from chunks where text like '%hunter2%'").fetchone(); db.close()
    p, _, _ = ingest(tmp_path, d, extra=("--follow-links",))
    db = sqlite3.connect(tmp_path/"kb.sqlite")
    assert p.returncode == 0 and db.execute("select count(*) from chunks where text like '%hunter2%'").fetchone()[0] == 2
    db.close()


@pytest.mark.subprocess
def test_unreadable_folders_are_reported(tmp_path):
    "As a user who is not root (root reads every folder): a folder they may not read is named, with the reason."
    with as_user() as (home, run):
        d = home/"docs"; (d/"locked").mkdir(parents=True); (d/"locked"/"a.md").write_text("# A\n\nx\n")
        (d/"ok.md").write_text("# Ok\n\nx\n"); (d/"locked").chmod(0)
        try: p = run(["-c", "import sys; from gaia_mas.cli import main; sys.exit(main())", "rag", "ingest", str(d),
                      "--kb", f"sqlite:///{home}/kb.sqlite", "--embeddings", "hash", "--no-progress"])
        finally: (d/"locked").chmod(0o755)
    assert p.returncode == 0 and "1 added" in p.stdout and "1 skipped" in p.stdout, (p.stdout, p.stderr[-2000:])
    assert "locked" in p.stderr and "cannot read this folder" in p.stderr, p.stderr[-2000:]


def test_unreadable_folders_are_reported_in_process(tmp_path, monkeypatch):
    "As root every folder is readable, so the walk's error is replayed: it is reported, not skipped silently."
    from gaia_mas.rag.kb import ingest as mod
    d = tmp_path/"docs"; (d/"locked").mkdir(parents=True); (d/"ok.md").write_text("# Ok\n\nx\n")
    real = os.walk
    def walk(top, onerror=None, **kw):
        for step in real(top, onerror=onerror, **kw):
            if step[0].endswith("locked"):
                onerror(PermissionError(13, "Permission denied", step[0])); continue
            yield step
    monkeypatch.setattr(mod.os, "walk", walk)
    found = dict(mod.iter_files([d]))
    assert found[d/"ok.md"] is None and "cannot read this folder: Permission denied" in found[d/"locked"]
