"""Write README.md from nbs/index.ipynb, and read the README's commands back for tests/test_readme.py.

`nbdev_readme` renders the index notebook with Quarto, which cannot be installed everywhere
(not on our CI machines). This does the same conversion for the cells nbdev would show:
markdown cells as they are, code cells as Python blocks followed by their text output.
Directives (`#| ...`) are dropped and cells marked `#| hide` are skipped. The index links to the docs pages as the site
names them (`gaia/app.html`); on the repository page those links go to the notebooks (`nbs/gaia/29_app.ipynb`).

Every `sh` and `python` block of the README runs in CI as written (tests/test_readme.py). An HTML comment right before a
block says how, and stays out of the rendered page:

    <!-- readme test: not run (needs a Hugging Face account) -->   skipped offline, with the reason printed
    <!-- readme test: server http://127.0.0.1:8000/health -->      started in the background; the next blocks run once
                                                                    that URL answers, and it is stopped at the end
    <!-- readme test: exit 1 with "no answer" (a small model) -->   exit 1 passes too when the output holds that text
"""
from __future__ import annotations
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent
NOTE = "<!-- Generated from nbs/index.ipynb by tools/readme.py: edit the notebook, not this file. -->"

def _directives(src): return [l[3:].strip() for l in src.splitlines() if l.startswith("#|")]

def _output_text(cell):
    texts = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream": texts.append(o.get("text", ""))
        elif "data" in o and "text/plain" in o["data"]: texts.append(o["data"]["text/plain"])
    return "".join(texts).strip()

def cell_md(cell):
    "The markdown for one notebook cell, or '' if nbdev would hide it."
    if cell.cell_type == "markdown": return cell.source.strip()
    d = _directives(cell.source)
    if "hide" in d or any(x.startswith("default_exp") for x in d): return ""
    code = "\n".join(l for l in cell.source.splitlines() if not l.startswith("#|")).strip()
    out = _output_text(cell)
    return f"```python\n{code}\n```" + (f"\n\n    {out.replace(chr(10), chr(10) + '    ')}" if out else "")

def _page_links(root:Path, md:str) -> str:
    "Links to a docs page (`gaia/app.html#x`), as links to its notebook (`nbs/gaia/29_app.ipynb#x`)."
    nbs = root/"nbs"
    pages = {re.sub(r"(^|/)\d+[a-z]?_", r"\1", p.relative_to(nbs).with_suffix(".html").as_posix()): p.relative_to(root)
             for p in nbs.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts}
    def link(m): return f"]({pages[m.group(1)].as_posix()}{m.group(2) or ''})" if m.group(1) in pages else m.group(0)
    return re.sub(r"\]\(([\w/]+\.html)(#[\w-]*)?\)", link, md)

def render(root:Path=ROOT) -> str:
    "The text of README.md, from the index notebook."
    import nbformat
    nb = nbformat.read(root/"nbs"/"index.ipynb", as_version=4)
    cells = [c for c in nb.cells if c.source.strip()]
    first, rest = cells[0].source.strip(), cells[1:]
    body = "\n\n".join(filter(None, map(cell_md, rest)))
    return f"{first}\n\n{NOTE}\n\n{_page_links(root, body)}\n"

@dataclass
class Block:
    "One fenced `sh` or `python` block of the README."
    lang: str  # 'sh' or 'python'
    code: str
    line: int  # where it starts in README.md
    section: str  # the `##` heading above it
    skip: Optional[str] = None  # why it is not run offline
    server: Optional[str] = None  # the URL that answers once the server it starts is up
    output: Optional[str] = None  # the text shown under it: the value of its last expression
    exit1: Optional[str] = None  # with exit status 1, the text that makes it an outcome the README describes

FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.M | re.S)
MARK = re.compile(r"<!-- readme test: (not run|server|exit 1 with) ?(.*?) -->\s*$")
OUTPUT = re.compile(r"\n((?:    .*\n?)+)")

def blocks(md:str) -> list[Block]:
    "The `sh` and `python` blocks of README text `md`, in order, with their markers and shown output."
    out, section = [], ""
    for m in FENCE.finditer(md):
        before = md[:m.start()]
        section = (re.findall(r"^## (.*)$", before, re.M) or [""])[-1]
        lang = {"sh": "sh", "bash": "sh", "shell": "sh", "python": "python"}.get(m.group(1))
        if not lang: continue
        b = Block(lang, m.group(2).rstrip("\n"), before.count("\n") + 1, section)
        if mark := MARK.search(before.rstrip("\n").rsplit("\n", 1)[-1]):
            kind, arg = mark.groups()
            if kind == "server": b.server = arg
            elif kind == "exit 1 with": b.exit1 = arg.split('"')[1]
            else: b.skip = arg.strip("() ") or "no reason given"
        if lang == "python" and (o := OUTPUT.match(md, m.end())):
            b.output = "\n".join(l[4:] for l in o.group(1).rstrip("\n").split("\n"))
        out.append(b)
    return out

def main(root:Path=ROOT): (root/"README.md").write_text(render(root), encoding="utf-8")

if __name__ == "__main__": main()
