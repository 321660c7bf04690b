"""MkDocs hooks for `make docs` (tools/docs.py adds them to mkdocs.yml's settings).

- Every page stays offline: nbconvert's notebook template, which mkdocs-jupyter uses, adds scripts that load MathJax
  and Mermaid from a CDN. The notebooks have no TeX, and their Mermaid diagrams are already SVG files, so those go.
- The page's table of contents is made from the headings the page has (section titles and show_doc's API entries),
  so each of its links goes to an id on the page.
- Search ranks prose first: the source of code cells and what they print are left out of the search index
  (`data-search-exclude`, which Material's search plugin honours), so the tests in a notebook do not outrank its text
  and API entries; the guides get a boost.
"""
import html as _html, re

_remote_script = re.compile(r'<script[^>]*\bsrc="(?:https?://[^"]*)?"[^>]*>\s*</script>', re.I)
_script = re.compile(r"<script\b[^>]*>.*?</script>", re.S | re.I)
_mathjax_config = re.compile(r'<script type="text/x-mathjax-config">.*?</script>', re.S)
_notice = re.compile(r'<span class="notice"[^>]*>\s*Copied!\s*</span>')
_heading = re.compile(r'<h([23]) id="([^"]+)">(.*?)</h\1>', re.S)
_code_input = re.compile(r'(<div class="highlight-ipynb[^"]*">)<pre>')
# the copy button's source: the cell's code again, as text; a `pre` too, so that the search can leave it out
_text_output = re.compile(r'(<div class="[^"]*jp-RenderedText[^"]*"[^>]*>\s*)<pre>')
_copy_text = re.compile(r'<div class="clipboard-copy-txt" (id="[^"]*")>(.*?)</div>', re.S)

def _drop_remote(m):
    "A script block that imports from the network becomes nothing; any other stays."
    return "" if re.search(r"""(import\(|from\s*)["']https?://""", m.group(0)) else m.group(0)

def _toc(html:str) -> list[dict]:
    "MkDocs' toc tokens for the page's h2 and h3 headings."
    tokens = []
    for level, hid, inner in _heading.findall(html):
        name = _html.unescape(re.sub(r"<[^>]+>", "", inner)).rstrip("¶").strip()
        tok = {"level": int(level), "id": hid, "name": name, "children": []}
        if tok["level"] == 3 and tokens: tokens[-1]["children"].append(tok)
        else: tokens.append(tok)
    return tokens

def on_page_content(html, page, config, files):
    "Remove the scripts that would fetch from the network; the contents from the page's own headings."
    from mkdocs.structure.toc import get_toc
    html = _mathjax_config.sub("", _remote_script.sub("", html))
    # the copy button's "Copied!" comes from docs.css, so that the search index does not hold it
    html = _notice.sub('<span class="notice" hidden></span>', _script.sub(_drop_remote, html))
    if page.file.src_path.endswith(".ipynb"): page.toc = get_toc(_toc(html))
    # on a `pre`, never a `div`: the search plugin matches skipped elements by tag name, and divs nest
    html = _code_input.sub(r"\1<pre data-search-exclude>", html)
    html = _text_output.sub(r"\1<pre data-search-exclude>", html)   # what a cell printed: a test's output, mostly
    html = _copy_text.sub(r'<pre class="clipboard-copy-txt" \1 data-search-exclude>\2</pre>', html)
    if page.file.src_path.startswith("guides/"): page.meta.setdefault("search", {}).setdefault("boost", 4)
    return html
