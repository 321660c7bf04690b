"""Where the RAG service spends its time under a burst: py-spy on a real `gaia-mas serve`, before and after.

    python bench/rag_profile.py --ref /path/to/checkout/of/main    # both versions, one after the other
    python bench/rag_profile.py --bursts 3 --size 128

For each version: `gaia-mas serve --provider scripted --latency 0.2` (sessions in SQLite), py-spy recording every
thread at 100 Hz while `--bursts` bursts of `--size` simultaneous requests hit `/multiagent/chat`; then the share of
samples in each part of the stack (a sample can count in several parts: they nest). Needs py-spy (a dev requirement)
and the right to trace a child process (root, or ptrace_scope 0). The raw profiles stay in a temp folder if --keep.
"""
import argparse, asyncio, collections, os, subprocess, sys, tempfile, time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE/"bench"))
from rag_load import burst, server  # noqa: E402
from rag_service import table  # noqa: E402

PARTS = {"KB search (SQLiteKB.search, in tool threads)": ("SQLiteKB.search", "PostgresKB.search"),
         "LangChain tool wrapper (BaseTool)": ("BaseTool.ainvoke", "BaseTool.invoke"),
         "checkpoints (LangGraph checkpoint code, aiosqlite, serde)": ("(sqlite/aio.py", "(sqlite/__init__", "aiosqlite/", "serde/",
                                                                      "pregel/_checkpoint.py", "(postgres/"),
         "LangGraph Pregel loop": ("(pregel/",),
         "HTTP: uvicorn, Starlette, FastAPI": ("(uvicorn/protocols", "(starlette/", "(fastapi/", "(h11/"),
         "LangChain chat-model wrapper": ("BaseChatModel.ainvoke", "agenerate_prompt"),
         "scripted model's replies": ("_reply (gaia_mas/rag/workflows/scripted",),
         "pydantic": ("(pydantic/", "(pydantic_core"),
         "logging": ("logging/__init__",)}

def shares(raw:Path) -> dict:
    "Share of samples per part of the stack, from py-spy's raw (collapsed) output."
    total, c = 0, collections.Counter()
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit(): continue
        total += int(n)
        for part, keys in PARTS.items():
            if any(k in stack for k in keys): c[part] += int(n)
    return {p: c[p] / max(total, 1) for p in PARTS} | {"samples": total}

def profile(code:Path, kb:str, tmp:str, bursts:int, size:int, label:str) -> dict:
    raw = Path(tmp)/f"{label}.txt"
    with server(code, 0.2, kb, f"sqlite:///{tmp}/{label}.sqlite") as (url, proc):
        asyncio.run(burst(url, 4, f"warm-{label}", "/multiagent/chat"))
        spy = subprocess.Popen(["py-spy", "record", "-p", str(proc.pid), "-r", "100", "-f", "raw", "-o", str(raw), "--nonblocking"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)
        for i in range(bursts): asyncio.run(burst(url, size, f"{label}-{i}", "/multiagent/chat"))
        spy.send_signal(2); spy.wait(timeout=60)  # SIGINT: py-spy writes its file and exits
    return shares(raw)

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", type=Path); ap.add_argument("--bursts", type=int, default=3); ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--keep", action="store_true", help="keep the raw profiles")
    a = ap.parse_args(argv)
    from gaia_mas.rag.kb.ingest import sample_kb
    kb, versions = sample_kb().url, [*((("before", a.ref.resolve()),) if a.ref else ()), ("after", HERE)]
    tmp = tempfile.mkdtemp(prefix="rag_profile_")
    got = {label: profile(code, kb, tmp, a.bursts, a.size, label) for label, code in versions}
    table(f"py-spy, {a.bursts} bursts of {a.size} on /multiagent/chat, 0.2 s per LLM call: share of samples (all threads)",
          ["part of the stack", *got], [[p, *(f"{100 * g[p]:.1f}%" for g in got.values())] for p in PARTS] +
          [["samples", *(g["samples"] for g in got.values())]])
    print(f"\nraw profiles: {tmp}" if a.keep else "")
    if not a.keep:
        import shutil; shutil.rmtree(tmp, ignore_errors=True)

if __name__ == "__main__": main()
