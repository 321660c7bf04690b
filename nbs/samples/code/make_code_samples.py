"""Write inventory.html (a Sphinx-like page, code highlighted by Pygments) and inventory.ipynb from inventory.md's code:
python make_code_samples.py. The files with nested code that the ingest tests read, one per format."""
import re
from pathlib import Path
import nbformat
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer, YamlLexer

HERE = Path(__file__).parent
md = (HERE/"inventory.md").read_text()
client, usage = re.findall(r"```python\n(.*?)```", md, re.S)
usage = "\n".join(l[3:] for l in usage.splitlines())  # the fence sits in a list item, indented by 3
config = "\n".join(l[4:] for l in md.split("nested per dependency:\n\n")[1].split("\n\n")[0].splitlines())
intro = ("The checkout service asks the inventory service for stock levels. A slow inventory must not stall checkout, "
         "so every call goes through a circuit breaker and the client remembers the last level it saw.")

def code(src, lexer): return highlight(src, lexer, HtmlFormatter(wrapcode=False))

(HERE/"inventory.html").write_text(f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Inventory client</title>
<meta name="team" content="platform"><meta name="tags" content="inventory,code"></head>
<body><div class="document"><section id="inventory-client">
<h1>Inventory client</h1>
<p>{intro}</p>
<section id="the-client"><h2>The client</h2>
{code(client, PythonLexer())}</section>
<section id="configuration"><h2>Configuration</h2>
<p>The breaker's settings live in the service's configuration, nested per dependency:</p>
{code(config, YamlLexer())}<ol><li><p>Create one client per process.</p></li>
<li><p>Share it between request handlers:</p>
{code(usage, PythonLexer())}</li></ol></section></section></div></body></html>
""")

nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "language": "python",
                                                         "display_name": "Python 3"},
                                        "language_info": {"name": "python"}})
nb.cells = [nbformat.v4.new_markdown_cell(f"# Inventory client\n\n{intro}"),
            nbformat.v4.new_markdown_cell("## The client"), nbformat.v4.new_code_cell(client.rstrip("\n")),
            nbformat.v4.new_markdown_cell("## Using it"), nbformat.v4.new_code_cell(usage.rstrip("\n"))]
for i, c in enumerate(nb.cells): c.id = f"cell-{i}"
nbformat.write(nb, str(HERE/"inventory.ipynb"))
