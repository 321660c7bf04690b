"Helpers of the RAG security tests: `gaia-mas serve` as a real process, and its peak memory while an attack runs."
import contextlib, os, signal, subprocess, sys, threading, time
from pathlib import Path
import httpx, psutil

from gaia_mas.core.pg_server import free_port

SERVE = [sys.executable, "-c", "import sys; from gaia_mas.cli import main; sys.exit(main())", "serve"]


@contextlib.contextmanager
def serve(*args:str, env:dict|None=None, timeout:float=90):
    "Run `gaia-mas serve --provider scripted ARGS` on a free port; yield (base URL, process, output lines) once it answers."
    port, lines = free_port(), []
    proc = subprocess.Popen([*SERVE, "--provider", "scripted", "--port", str(port), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env={**os.environ, "OPIK_TRACK_DISABLE": "true", **(env or {})},
                            start_new_session=True, text=True)
    threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True).start()
    url, end = f"http://127.0.0.1:{port}", time.monotonic() + timeout
    try:
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/health", timeout=5).status_code in (200, 503): break
            if proc.poll() is not None or time.monotonic() > end: raise RuntimeError("serve did not start:\n" + "".join(lines))
            time.sleep(0.3)
        yield url, proc, lines
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try: proc.wait(timeout=20)
            except subprocess.TimeoutExpired: os.killpg(proc.pid, signal.SIGKILL); proc.wait(timeout=10)


def _tree_rss(p:psutil.Process) -> int:
    "Resident bytes of `p` and its children."
    total = 0
    for q in [p, *p.children(recursive=True)]:
        with contextlib.suppress(psutil.Error): total += q.memory_info().rss
    return total


class PeakRSS:
    "The peak resident memory (MiB) of a process and its children (`serve`'s workers) in the `with` block, every 20 ms."
    def __init__(self, pid:int): self.p, self.peak, self._stop = psutil.Process(pid), 0, threading.Event()

    def _sample(self):
        while not self._stop.is_set():
            with contextlib.suppress(psutil.Error): self.peak = max(self.peak, _tree_rss(self.p))
            time.sleep(0.02)

    def __enter__(self):
        self.before = _tree_rss(self.p) / 2**20; self.t0 = time.monotonic()
        self._t = threading.Thread(target=self._sample, daemon=True); self._t.start(); return self

    def __exit__(self, *exc):
        self._stop.set(); self._t.join(); self.seconds = time.monotonic() - self.t0
        self.peak_mib = max(self.peak / 2**20, self.before); self.growth = self.peak_mib - self.before

    def __str__(self): return f"peak {self.peak_mib:.0f} MiB (+{self.growth:.0f} MiB) in {self.seconds:.1f}s"


GAIA = [sys.executable, "-c", "import sys; from gaia_mas.cli import main; sys.exit(main())"]


def run_measured(*args:str, timeout:float=300, env:dict|None=None) -> tuple[subprocess.CompletedProcess, float, float]:
    "Run `gaia-mas ARGS`; the finished process, the peak RSS in MiB of it and its children together, and the seconds taken."
    env = {**os.environ, "OPIK_TRACK_DISABLE": "true", **(env or {})}
    env.pop("OPENAI_API_KEY", None)
    t0, peak = time.monotonic(), 0
    proc = subprocess.Popen([*GAIA, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    ps = psutil.Process(proc.pid)
    while proc.poll() is None and time.monotonic() - t0 < timeout:
        with contextlib.suppress(psutil.Error):
            peak = max(peak, sum(p.memory_info().rss for p in [ps, *ps.children(recursive=True)]))
        time.sleep(0.02)
    if proc.poll() is None: proc.kill()
    out, err = proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), peak / 2**20, time.monotonic() - t0
