"""Build the docs site into settings.ini's doc_path (`_docs/`): `make docs`, offline, with or without Quarto.

1. Run every notebook (as `nbdev_test` does: cells flagged with settings.ini's tst_flags, which start servers, keep their
   source and are not run) and save the executed copies in _build/nbs/, so the pages show results without storing
   outputs in nbs/.
2. Process them with `nbdev_proc_nbs` into _proc/ (show_doc's API entries, with each parameter's docment).
3. Where `quarto` is on PATH, hand over to `nbdev_docs` as nbdev users expect. Otherwise render _proc/ with MkDocs
   (mkdocs-material and mkdocs-jupyter, settings in mkdocs.yml; the sidebar comes from nbs/sidebar.yml). Page names drop
   the number prefix as Quarto's do (nbs/gaia/29_app.ipynb is gaia/app.html), Mermaid diagrams are drawn as SVG files
   by mermaid-cli, and nothing on a page is fetched from the network.

    python tools/docs.py            # the whole site
    python tools/docs.py --no-exec  # the notebooks' saved outputs only (fast)
    python tools/docs.py --exec-only --flags slow  # `make test`'s notebook tests: nbdev_test's run, outputs kept
    python tools/docs.py --reuse    # the site from the executed copies in _build/nbs/, running only those missing

`make test` runs each notebook once: its notebook step is `--exec-only --flags slow` (every cell, as `nbdev_test --flags
slow` runs them, in a pool of worker processes as nbdev_test's), and tests/test_docs_site.py then builds the site with
`--reuse` from the copies that step kept.
"""
from __future__ import annotations
import argparse, hashlib, json, os, re, shutil, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT/"_build"
NB_COPY, SITE_SRC, MERMAID = BUILD/"nbs", BUILD/"site", BUILD/"mermaid"
_prefix = re.compile(r"^\d+[a-z]?_")
_mermaid = re.compile(r"```\{?mermaid\}?\n(.*?)```", re.S)

def cfg():
    from nbdev.config import get_config
    return get_config(path=ROOT)

def page_name(rel:Path) -> Path:
    "The page a notebook becomes, as Quarto names it: gaia/29_app.ipynb -> gaia/app.ipynb."
    return rel.with_name(_prefix.sub("", rel.name))

def notebooks(nbs:Path) -> list[Path]:
    return sorted(p for p in nbs.rglob("*.ipynb")
                  if not any(part.startswith((".", "_")) for part in p.relative_to(nbs).parts[:-1])
                  and "samples" not in p.relative_to(nbs).parts)

def run_one(src:Path, dst:Path, flags:list[str]) -> str:
    "Execute one notebook as nbdev_test does, skipping flagged cells; write the executed copy; the error, or ''."
    os.environ["IN_TEST"] = "1"
    from nbdev.process import NBProcessor
    from nbdev.frontmatter import FrontmatterProc
    from execnb.shell import CaptureShell
    from execnb.nbio import read_nb, write_nb
    from fastcore.xtras import working_directory
    nb = NBProcessor(src, procs=FrontmatterProc, process=True).nb
    def skip(cell):
        if cell.cell_type != "code" or "nbdev_export" + "(" in cell.source: return True
        d = getattr(cell, "directives_", {}) or {}
        return d.get("eval:", [""])[0].lower() == "false" or bool(set(flags) & d.keys())
    start, err, k = time.time(), "", CaptureShell(src)
    try:
        with working_directory(src.parent): k.run_all(nb, exc_stop=True, preproc=skip)
    except Exception: err = k.prettytb(fname=src)
    ran = {c.get("id"): c for c in nb.cells}
    raw = read_nb(src)  # the cells as written: NBProcessor took the `#|` lines out of the ones it ran
    for c in raw.cells:
        if c.cell_type == "code" and c.get("id") in ran:
            c.outputs, c.execution_count = ran[c["id"]].get("outputs", []), ran[c["id"]].get("execution_count")
    dst.parent.mkdir(parents=True, exist_ok=True)
    write_nb(raw, dst)
    return err

def _run_job(job:tuple) -> tuple[str, str, float]:
    "run_one in a worker of the pool: (name, error or '', seconds)."
    src, dst, skip = job
    start = time.time()
    try: err = run_one(src, dst, skip)
    except Exception as e: err = f"{type(e).__name__}: {e}"
    return str(src.relative_to(ROOT)), err, time.time() - start

def _fresh(src:Path, dst:Path) -> bool:
    "An executed copy at least as new as its notebook and the package's code."
    return dst.exists() and dst.stat().st_mtime >= max(src.stat().st_mtime, _code_mtime())

def _code_mtime() -> float:
    return max(p.stat().st_mtime for p in (ROOT/"gaia_mas").rglob("*.py"))

def execute(nbs:Path, n_workers:int, skip:list[str], only:list[Path]|None=None, reuse:bool=False) -> list[str]:
    """Run the notebooks of `nbs` (or `only` those) into NB_COPY, in `n_workers` worker processes that each run one
    notebook after another, as nbdev_test does; cells flagged with one of `skip` are not run. With `reuse`, a notebook
    whose executed copy is fresh is not run again. The names of those that failed."""
    from fastcore.parallel import parallel
    import docs  # this file by its module name (tools/ is on sys.path), so that the workers find _run_job
    jobs = [(p, NB_COPY/p.relative_to(nbs), skip) for p in (only or notebooks(nbs))]
    if reuse: jobs = [j for j in jobs if not _fresh(j[0], j[1])]
    if not jobs: print("the executed notebooks in _build/nbs/ are up to date"); return []
    res = list(parallel(docs._run_job, jobs, n_workers=n_workers)) if n_workers > 1 else [_run_job(j) for j in jobs]
    print(f"ran {len(res)} notebooks; slowest: " + ", ".join(f"{n} {s:.0f} s" for n, _, s in sorted(res, key=lambda r: -r[2])[:5]))
    for name, err, _ in res:
        if err: print(f"FAILED {name}:\n{err}", file=sys.stderr)
    return [name for name, err, _ in res if err]

def copy_nbs(nbs:Path, saved_outputs:bool) -> None:
    "Put the docs' other files (and, with saved_outputs, the notebooks as they are) in NB_COPY."
    for p in nbs.rglob("*"):
        rel = p.relative_to(nbs)
        if p.is_dir() or rel.parts[0] in ("samples",) or rel.name.startswith("."): continue
        if p.suffix == ".ipynb" and not saved_outputs: continue
        (NB_COPY/rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(p, NB_COPY/rel)

def proc(env:dict) -> Path:
    "nbdev_proc_nbs of NB_COPY into _proc/ (with a no-op quarto first on PATH unless the real one is there)."
    shutil.rmtree(ROOT/"_proc", ignore_errors=True)
    subprocess.run([Path(sys.executable).parent/"nbdev_proc_nbs", "--path", str(NB_COPY)], cwd=ROOT, env=env, check=True)
    return ROOT/"_proc"

def mermaid_svg(source:str) -> str:
    "The file name, under MERMAID, of `source` drawn as SVG by mermaid-cli (drawn once per source)."
    from gaia_mas.gaia.app import mmdc_path, _chromium
    name = hashlib.sha1(source.encode()).hexdigest()[:16] + ".svg"
    out = MERMAID/name
    if out.exists(): return name
    mmdc, chrome = mmdc_path(), _chromium()
    if not (mmdc and chrome): sys.exit("make docs draws Mermaid diagrams with mermaid-cli and chromium: run make install")
    MERMAID.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as d:
        cfgf, src = Path(d)/"puppeteer.json", Path(d)/"graph.mmd"
        cfgf.write_text(json.dumps({"executablePath": chrome, "args": ["--no-sandbox", "--disable-gpu"]}))
        src.write_text(source)
        subprocess.run([mmdc, "-i", src, "-o", out, "-p", cfgf, "-b", "white"], check=True, capture_output=True,
                       timeout=180)
    return name

def _img(depth:int):
    def sub(m): return f'<img class="mermaid-svg" alt="diagram" src="{"../"*depth}_diagrams/{mermaid_svg(m.group(1))}">'
    return sub

def _relative_links(text:str, depth:int, base:str) -> str:
    "Links to the published site (nbdev's doc links) as links inside this build."
    return text.replace(base, "../"*depth or "./")

_attrs = re.compile(r"\)\{target=[^}]*\}")  # pandoc attributes on show_doc's source link
_code_link = re.compile(r"\[`([^`]+)`\]\([^)]*\)")
_fence = re.compile(r"```python\n.*?```", re.S)
# Quarto's cell options, as the tags nbconvert's TagRemovePreprocessor acts on (mkdocs.yml: remove_tag_config)
_hide = {("echo", "false"): "hide_input", ("include", "false"): "remove_cell", ("output", "false"): "hide_output"}

_nb_link = re.compile(r"\]\(((?:[\w.-]+/)*)([\w.-]+)\.ipynb(#[\w.-]*)?\)")
# nbdev links a name in backticks to its API entry even inside a link's text: [`search`](search.html) becomes a link
# within a link, which Markdown prints as text; the outer link (the one the author wrote) is kept
_nested = re.compile(r"\[\[(`[^`\]]+`)\]\([^)\s]*\)\]\(([^)\s]*)\)")

def _markdown(md:str, depth:int, base:str) -> str:
    "A show_doc or markdown text for MkDocs: own links relative, notebooks' links to pages, plain names in signatures."
    md = _nested.sub(r"[\1](\2)", _attrs.sub(")", _relative_links(md, depth, base)))
    md = _nb_link.sub(lambda m: f"]({m.group(1)}{_prefix.sub('', m.group(2))}.html{m.group(3) or ''})", md)
    return _fence.sub(lambda m: _code_link.sub(r"\1", m.group(0)), md)

_api_anchor = re.compile(r"^(#{2,4}) ([\w.]+)\s*$", re.M)
def _anchor(m):
    "show_doc's heading, with the anchor nbdev's doc links use (the name in lower case, as Quarto makes it)."
    name = m.group(2)
    return (f'<a id="{name.lower()}"></a>\n\n' if name.lower() != name else "") + m.group(0)

def _options(cell) -> None:
    "Quarto's `#| key: value` lines out of the source and into tags."
    lines = cell["source"].splitlines()
    opts = [l[3:].split(":", 1) for l in lines if l.startswith("#|") and ":" in l]
    tags = [_hide[(k.strip(), v.strip())] for k, v in opts if (k.strip(), v.strip()) in _hide]
    if tags: cell.setdefault("metadata", {})["tags"] = tags
    cell["source"] = "\n".join(l for l in lines if not l.startswith("#|"))

def _front(nb) -> dict:
    "The notebook's front matter (title, description), taken out of its first raw cell."
    import yaml
    first = nb["cells"][0] if nb["cells"] else None
    if not (first and first["cell_type"] == "raw" and first["source"].startswith("---")): return {}
    nb["cells"].pop(0)
    return yaml.safe_load(first["source"].strip().strip("-")) or {}

def _page(nb, depth:int, base:str, ids:set) -> str:
    "Make one processed notebook a page for MkDocs, adding its API entries' anchors to `ids`; its title."
    for c in nb["cells"]:
        if isinstance(c["source"], list): c["source"] = "".join(c["source"])
    fm = _front(nb)
    title = fm.get("title") or "gaia_mas"
    head = f"# {title}" + (f"\n\n> {fm['description']}" if fm.get("description") else "")
    nb["cells"].insert(0, {"cell_type": "markdown", "metadata": {}, "source": head})
    nb["metadata"].pop("widgets", None)  # its widget script would come from a CDN; outputs keep their text
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown": cell["source"] = _mermaid.sub(_img(depth), _markdown(cell["source"], depth, base))
        if cell["cell_type"] == "code": _options(cell)
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "text/html" in data: data["text/html"] = _framed("".join(data["text/html"]))
            md = data.get("text/markdown")
            if md is None: continue
            md = _tool_heading.sub(r"\1 \2", _markdown("".join(md), depth, base))
            ids.update(n for m in _api_anchor.finditer(md) for n in (m.group(2), m.group(2).lower()))
            md = _api_anchor.sub(_anchor, md)
            if _mermaid.search(md): data.pop("text/markdown"); data["text/html"] = _mermaid.sub(_img(depth), md)
            else: data["text/markdown"] = md
    return title

def _framed(html:str) -> str:
    "A whole HTML page (a report a cell shows) in a frame of its own, so that its styles stay off the docs page."
    if not html.lstrip()[:15].lower().startswith("<!doctype html"): return html
    import html as _h
    return (f'<iframe class="page-output" title="the page the cell made" sandbox srcdoc="{_h.escape(html, quote=True)}">'
            "</iframe>")

# show_doc of a LangChain tool names it "image_tool'> func=<function image_tool at 0x...>"
_tool_heading = re.compile(r"^(#{2,4}) (\w+)'> func=<function \w+ at 0x[0-9a-f]+>\s*$", re.M)
_md_link = re.compile(r"\[([^\]]+)\]\(([^)\s#]*)(?:#([^)\s]*))?\)")

def _drop_dead_links(nb, page:str, anchors:dict[str, set]) -> None:
    "Links to no page (a base class's docs), or nbdev's to a name with no API entry (a private helper), as text."
    def sub(m):
        text, path, frag = m.groups()
        if not path or re.match(r"^[a-z]+:", path) or not path.endswith((".html", ".md")): return m.group(0)
        target = os.path.normpath(os.path.join(os.path.dirname(page), path))
        if target not in anchors: return text
        api = text.startswith("`") and frag and re.fullmatch(r"[\w.]+", frag)
        return text if api and frag not in anchors[target] else m.group(0)
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown": cell["source"] = _md_link.sub(sub, cell["source"])
        for out in cell.get("outputs", []):
            if "text/markdown" in out.get("data", {}): out["data"]["text/markdown"] = _md_link.sub(sub, out["data"]["text/markdown"])

def site_sources(procd:Path) -> dict[str, str]:
    "The pages MkDocs renders, in SITE_SRC: named as Quarto names them, diagrams as SVG, own links relative; their titles."
    c = cfg()
    base = c.doc_host.rstrip("/") + "/" + c.doc_baseurl.strip("/") + "/"
    shutil.rmtree(SITE_SRC, ignore_errors=True)
    titles, nbs, anchors = {}, {}, {}
    for p in notebooks(procd):
        rel = page_name(p.relative_to(procd))
        nbs[rel], ids = json.loads(p.read_text()), set()
        titles[str(rel)] = _page(nbs[rel], len(rel.parts) - 1, base, ids)
        anchors[rel.with_suffix(".html").as_posix()] = ids
    for rel, nb in nbs.items():
        _drop_dead_links(nb, rel.with_suffix(".html").as_posix(), anchors)
        (SITE_SRC/rel).parent.mkdir(parents=True, exist_ok=True)
        (SITE_SRC/rel).write_text(json.dumps(nb))
    if MERMAID.exists(): shutil.copytree(MERMAID, SITE_SRC/"_diagrams")
    shutil.copy2(ROOT/"nbs"/"styles.css", SITE_SRC/"styles.css")
    shutil.copy2(ROOT/"tools"/"docs.css", SITE_SRC/"docs.css")
    return titles

def nav(titles:dict[str, str]) -> list:
    "MkDocs' nav from nbs/sidebar.yml (the same grouping Quarto's sidebar shows), with the pages' titles."
    import yaml
    side = yaml.safe_load((ROOT/"nbs"/"sidebar.yml").read_text())["website"]["sidebar"]["contents"]
    def item(x):
        if isinstance(x, str): name = str(page_name(Path(x))); return {titles.get(name, name): name}
        return {x["section"]: [item(y) for y in x["contents"]]}
    return [item(x) for x in side]

def mkdocs(env:dict, titles:dict[str, str]) -> None:
    "Render SITE_SRC into doc_path with the settings of mkdocs.yml."
    doc_path = ROOT/cfg().doc_path
    conf = {"INHERIT": str(ROOT/"mkdocs.yml"), "docs_dir": str(SITE_SRC), "site_dir": str(doc_path), "nav": nav(titles),
            "hooks": [str(ROOT/"tools"/"docs_hooks.py")]}
    (BUILD/"mkdocs.yml").write_text(json.dumps(conf, indent=1))
    shutil.rmtree(doc_path, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(BUILD/"mkdocs.yml")],
                   cwd=ROOT, env=env, check=True)

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-exec", action="store_true", help="use the notebooks' saved outputs; run nothing")
    ap.add_argument("--workers", "--n_workers", type=int, default=2, help="notebooks run at once")
    ap.add_argument("--flags", default="", help="space separated tst_flags whose cells run too (as nbdev_test's)")
    ap.add_argument("--path", help="run only this notebook, or the notebooks of this folder (with --exec-only)")
    ap.add_argument("--exec-only", action="store_true", help="run the notebooks into _build/nbs/ and stop: a test run")
    ap.add_argument("--reuse", action="store_true", help="run only the notebooks without a fresh copy in _build/nbs/")
    ap.add_argument("--render-only", action="store_true", help="render the _proc/ of the last build again")
    ap.add_argument("--run-one", nargs=2, metavar=("NOTEBOOK", "OUT"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    skip = [f for f in cfg().tst_flags.split() if f not in a.flags.split()]
    if a.run_one:
        err = run_one(Path(a.run_one[0]).resolve(), Path(a.run_one[1]), skip)
        print(err, file=sys.stderr); sys.exit(1 if err else 0)
    start, nbs = time.time(), ROOT/cfg().nbs_path
    os.environ.update(OPIK_TRACK_DISABLE="true", NO_MKDOCS_2_WARNING="1")
    env = dict(os.environ)
    quarto = shutil.which("quarto")
    if a.render_only: return render(env, start)
    if a.exec_only:
        only = None
        if a.path:
            p = Path(a.path).resolve()
            only = notebooks(p) if p.is_dir() else [p]
            only = [q for q in only if q.is_relative_to(nbs)]
        failed = execute(nbs, a.workers, skip, only)
        if failed: sys.exit(f"notebook tests failed in {len(failed)} notebook(s): {', '.join(failed)} (see above)")
        return print(f"notebook tests passed ({time.time() - start:.0f} s); executed copies in {NB_COPY.relative_to(ROOT)}/")
    if not a.reuse: shutil.rmtree(NB_COPY, ignore_errors=True)
    for gone in [q for q in NB_COPY.rglob("*.ipynb") if not (nbs/q.relative_to(NB_COPY)).exists()]: gone.unlink()
    copy_nbs(nbs, saved_outputs=a.no_exec)
    if not a.no_exec:
        failed = execute(nbs, a.workers, skip, reuse=a.reuse)
        if failed: sys.exit(f"make docs: {len(failed)} notebook(s) failed to run: {', '.join(failed)} (see above)")
    if quarto:
        subprocess.run([Path(sys.executable).parent/"nbdev_docs", "--path", str(NB_COPY)], cwd=ROOT, env=env, check=True)
        # nbdev_docs also renders README.md, from the executed index; ours links to the notebooks (tools/readme.py)
        subprocess.run([sys.executable, str(ROOT/"tools"/"readme.py")], cwd=ROOT, env=env, check=True)
        print(f"make docs: nbdev_docs and Quarto made {cfg().doc_path}/ ({time.time() - start:.0f} s)")
    else:
        fake = Path(tempfile.mkdtemp())
        (fake/"quarto").write_text("#!/bin/sh\nexit 0\n"); (fake/"quarto").chmod(0o755)
        proc({**env, "PATH": f"{fake}:{env['PATH']}"})
        shutil.rmtree(fake)
        render(env, start)

def render(env:dict, start:float) -> None:
    "_proc/ to the site, with MkDocs."
    titles = site_sources(ROOT/"_proc")
    mkdocs(env, titles)
    print(f"make docs: {len(titles)} pages in {cfg().doc_path}/ ({time.time() - start:.0f} s)")

if __name__ == "__main__": main()
