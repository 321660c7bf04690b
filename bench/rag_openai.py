"""Benchmark of the OpenAI-compatible routes and HTTP uploads, side by side in one run (scripted models, offline).

    python bench/rag_openai.py                  # latency 0.3 s per LLM call, 5 runs per pattern
    python bench/rag_openai.py --latency 0.2 --runs 3 --upload-mb 20

1. Time to first token against total time: per pattern, streamed requests through the `openai` client to a real uvicorn
   server on loopback; the first content chunk's arrival against the whole reply, and the plain (unstreamed) reply's
   time. The answering agent's tokens are streamed as its model writes them (the scripted model spreads its latency over
   its pieces), so for sequential and supervisor the first token comes when the last agent starts, not when it ends;
   the parallel pattern picks its answer after the candidates are written, so its first token comes at the end.
2. Upload throughput: markdown files posted to `POST /kb/documents` (multipart, streamed to disk, checked, chunked,
   embedded with the offline hash embedder, stored in SQLite): MB/s and chunks/s, one big request and many small ones.
"""
import argparse, os, statistics, sys, tempfile, time
from pathlib import Path

os.environ.setdefault("OPIK_TRACK_DISABLE", "true")
import httpx, openai  # noqa: E402
from gaia_mas.core.testing import LiveServer  # noqa: E402
from gaia_mas.rag.kb.api import HashEmbeddings, open_kb  # noqa: E402
from gaia_mas.rag.kb.ingest import ingest, sample_dir  # noqa: E402
from gaia_mas.rag.service.app import create_app  # noqa: E402
from gaia_mas.rag.workflows.system import make_rag_system  # noqa: E402

Q = {"sequential": "What is a circuit breaker?", "parallel": "What is the best way to handle retries?",
     "supervisor": "Explain how to implement circuit breaker pattern in microservices with code examples"}

def table(title, head, rows):
    print(f"\n### {title}\n\n| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for r in rows: print("| " + " | ".join(str(c) for c in r) + " |")

def streamed(client, pattern) -> tuple[float, float, int]:
    "(time to first content chunk, total, content chunks) of one streamed request."
    t0, first, n = time.perf_counter(), None, 0
    for c in client.chat.completions.create(model=pattern, messages=[{"role": "user", "content": Q[pattern]}], stream=True):
        if c.choices and c.choices[0].delta.content:
            n += 1; first = first or time.perf_counter() - t0
    return first, time.perf_counter() - t0, n

def plain(client, pattern) -> float:
    t0 = time.perf_counter()
    client.chat.completions.create(model=pattern, messages=[{"role": "user", "content": Q[pattern]}])
    return time.perf_counter() - t0

def ttft_rows(url, runs) -> list:
    client = openai.OpenAI(base_url=f"{url}/v1", api_key="bench", max_retries=0, timeout=300)
    rows = []
    for p in Q:
        s = [streamed(client, p) for _ in range(runs)]
        pl = [plain(client, p) for _ in range(runs)]
        ttft, total, chunks = (statistics.median(x) for x in zip(*s))
        rows.append((p, f"{ttft:.2f}", f"{total:.2f}", f"{ttft / total:.2f}", f"{statistics.median(pl):.2f}", int(chunks)))
    return rows

def files(folder:Path, n:int, size:int) -> list[Path]:
    "n markdown files of about `size` bytes each, with headings every ~4 KB."
    para = "Circuit breakers, bulkheads and retries with backoff keep one failing dependency from taking a system down. "
    out = []
    for i in range(n):
        parts, k = [f"# Resilience notes {i}\n"], 0
        while sum(map(len, parts)) < size:
            parts.append(f"\n## Section {k}\n\n" + (para * 40)); k += 1
        f = folder/f"notes-{i}.md"; f.write_text("".join(parts)); out.append(f)
    return out

def upload_rows(url, folder:Path, mb:float) -> list:
    rows = []
    for label, n in (("1 big file", 1), ("many 100 KB files", max(1, int(mb * 10)))):
        fs = files(folder/label.replace(" ", "_"), n, int(mb * 2**20 / n)) if (folder/label.replace(" ", "_")).mkdir() is None else []
        body = sum(f.stat().st_size for f in fs)
        t0 = time.perf_counter(); chunks = 0
        with httpx.Client(base_url=url, headers={"X-API-Key": "bench"}, timeout=600) as c:
            for j in range(0, len(fs), 50):  # at most 100 files a request
                r = c.post("/kb/documents", files=[("files", (f.name, f.read_bytes())) for f in fs[j:j + 50]])
                assert r.status_code == 201, r.text[:300]
                chunks += sum(d["chunks"] for d in r.json()["documents"])
        dt = time.perf_counter() - t0
        rows.append((label, n, f"{body / 2**20:.1f}", f"{dt:.2f}", f"{body / 2**20 / dt:.2f}", chunks, f"{chunks / dt:.0f}"))
    return rows

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--latency", type=float, default=0.3, help="seconds per scripted LLM call")
    ap.add_argument("--runs", type=int, default=5, help="requests per pattern and mode")
    ap.add_argument("--upload-mb", type=float, default=10, help="megabytes uploaded per upload row")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        kb = open_kb(d/"kb.sqlite", HashEmbeddings(), create=True); ingest(kb, [sample_dir()/"docs"])
        system = make_rag_system(provider="scripted", latency=a.latency, knowledge_base=kb)
        with LiveServer(create_app(system, api_key="bench", max_upload_mb=max(25, a.upload_mb + 1))) as url:
            print(f"scripted latency {a.latency}s per LLM call, {a.runs} runs per pattern (medians); "
                  f"{os.cpu_count()} cores, shared with other work: compare ratios within this run")
            table("Time to first token (streamed) against total", ("pattern", "TTFT s", "total s", "TTFT/total", "plain reply s", "chunks"), ttft_rows(url, a.runs))
            table("Upload throughput (POST /kb/documents, hash embeddings, SQLite)", ("upload", "files", "MB", "seconds", "MB/s", "chunks", "chunks/s"),
                  upload_rows(url, d, a.upload_mb))

if __name__ == "__main__": main()
