"""MkDocs hooks for `make docs` (mkdocs.yml): keep every page offline.

nbconvert's notebook template, which mkdocs-jupyter uses, adds scripts that load MathJax and Mermaid from a CDN. The
notebooks have no TeX, and their Mermaid diagrams are already SVG files (tools/docs.py), so those scripts go.
"""
import re

_remote_script = re.compile(r'<script[^>]*\bsrc="https?://[^"]*"[^>]*>\s*</script>', re.I)
_script = re.compile(r"<script\b[^>]*>.*?</script>", re.S | re.I)
_mathjax_config = re.compile(r'<script type="text/x-mathjax-config">.*?</script>', re.S)

def _drop_remote(m):
    "A script block that imports from the network becomes nothing; any other stays."
    return "" if re.search(r"""(import\(|from\s*)["']https?://""", m.group(0)) else m.group(0)

def on_page_content(html, page, config, files):
    "Remove the scripts that would fetch from the network."
    html = _mathjax_config.sub("", _remote_script.sub("", html))
    return _script.sub(_drop_remote, html)
