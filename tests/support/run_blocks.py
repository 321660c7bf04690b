"""Run README Python blocks the way a notebook runs cells: one namespace, in order; a block's last expression is
evaluated, and where the README shows its value that value must come out. Standard library only, so that any
interpreter (a fresh venv's included) can run it:

    python run_blocks.py BLOCKS.json      # a list of {"code", "line", "output"}; exits 1 at the first failure
"""
import ast, json, sys, traceback


def run(block:dict, ns:dict) -> str:
    "Run one block in `ns`; the repr of its last expression ('' if there is none, or it is None)."
    name = f"<README.md line {block['line']}>"
    tree = ast.parse(block["code"], name)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, name, "exec"), ns)
    if last is None: return ""
    value = eval(compile(ast.Expression(last.value), name, "eval"), ns)
    return "" if value is None else repr(value)


def main(path:str) -> int:
    ns = {"__name__": "__main__"}
    for b in json.load(open(path, encoding="utf-8")):
        print(f"--- README.md line {b['line']}", flush=True)
        try: shown = run(b, ns)
        except BaseException:
            traceback.print_exc(); print(f"FAILED: the Python block at README.md line {b['line']}", flush=True); return 1
        if b.get("output") is not None and shown != b["output"]:
            print(f"FAILED: the block at README.md line {b['line']} gave {shown!r}; the README shows {b['output']!r}")
            return 1
        if shown: print(shown)
    return 0


if __name__ == "__main__": sys.exit(main(sys.argv[1]))
