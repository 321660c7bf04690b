"""`gaia-mas serve` as real processes: the command answers on a free loopback port with the scripted provider and an
API key from the environment; with no `--workers` one process per core serves, and `--workers 2` too; and two separate `serve` processes sharing a PostgreSQL
checkpointer continue each other's sessions (a session started on one goes on on the other), also under concurrent
load on both, with the knowledge base and the sessions in one PostgreSQL database (the scale-out setup)."""
import asyncio, contextlib, os, signal, subprocess, sys, time
import httpx, pytest

from gaia_mas.core.pg_server import fresh_database, free_port

pytestmark = pytest.mark.process

SERVE = [sys.executable, "-c", "import sys; from gaia_mas.rag.cli import rag_main; sys.exit(rag_main(sys.argv[1:]))", "serve"]
Q = "What is a circuit breaker?"

@pytest.fixture(scope="module")
def sample_kb_url():
    from gaia_mas.rag.kb.ingest import sample_kb
    return sample_kb().url

@contextlib.contextmanager
def serve(*args:str, env:dict|None=None, timeout:float=90, log:list|None=None):
    "Run `gaia-mas serve --provider scripted ARGS` on a free port; yield its base URL once /health answers; stop it."
    port = free_port()
    proc = subprocess.Popen([*SERVE, "--provider", "scripted", "--port", str(port), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env={**os.environ, "OPIK_TRACK_DISABLE": "true", **(env or {})},
                            start_new_session=True)
    url, end = f"http://127.0.0.1:{port}", time.monotonic() + timeout
    try:
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/health", timeout=5).status_code == 200: break
            if proc.poll() is not None or time.monotonic() > end:
                raise RuntimeError(f"serve did not start:\n{_stop(proc)}")
            time.sleep(0.3)
        yield url
    finally:
        out = _stop(proc)
        if log is not None: log.append(out)  # what it printed, for the caller
        assert "Traceback" not in out, out

def _stop(proc) -> str:
    "Stop the server's process group (SIGTERM, then SIGKILL) and return what it printed."
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try: proc.wait(timeout=20)
        except subprocess.TimeoutExpired: os.killpg(proc.pid, signal.SIGKILL); proc.wait(timeout=10)
    return proc.stdout.read().decode(errors="replace")

def test_serve_answers_every_endpoint_and_wants_the_key(sample_kb_url, tmp_path):
    with serve("--kb", sample_kb_url, "--sessions", f"sqlite:///{tmp_path}/s.sqlite", "--history-tokens", "300",
               "--session-ttl", "7d", env={"GAIA_MAS_API_KEY": "k-123"}) as url:
        assert httpx.post(f"{url}/multiagent/sequential/chat", json={"question": Q}, timeout=30).status_code == 401
        h = {"Authorization": "Bearer k-123"}
        for p in ("sequential", "parallel", "supervisor"):
            r = httpx.post(f"{url}/multiagent/{p}/chat", json={"question": Q, "session_id": "s1"}, headers=h, timeout=60)
            assert r.status_code == 200 and r.json()["pattern"] == p and r.json()["citations"], r.text
            assert r.json()["metadata"]["history"]["tokens"] <= 300, r.json()["metadata"]
        r = httpx.post(f"{url}/multiagent/chat", json={"question": Q}, headers=h, timeout=60)
        assert r.json()["pattern_selection_reasoning"]
        health = httpx.get(f"{url}/health", timeout=30).json()
        assert health["kb"]["documents"] > 0 and health["provider"] == "scripted" and health["sessions"] == "sqlite"

def test_serve_with_two_workers(sample_kb_url, tmp_path):
    with serve("--kb", sample_kb_url, "--sessions", f"sqlite:///{tmp_path}/s.sqlite", "--workers", "2") as url:
        rs = [httpx.post(f"{url}/multiagent/sequential/chat", json={"question": Q, "session_id": f"w{i}"}, timeout=60) for i in range(4)]
        assert [r.status_code for r in rs] == [200] * 4

def _worker_procs(url:str) -> list:
    "The uvicorn worker processes the `serve` behind `url` has started (its spawned children; other servers that this"
    "pytest process runs, such as a module's shared one, are left out)."
    import psutil
    port = url.rsplit(":", 1)[1]
    mine = [p for p in psutil.Process().children() if f" --port {port} " in f" {' '.join(p.cmdline())} "]
    return [k for p in mine for k in p.children(recursive=True) if "spawn_main" in " ".join(k.cmdline())]

def _workers(url:str) -> int:
    "How many uvicorn worker processes the `serve` behind `url` has started."
    return len(_worker_procs(url))

def test_serve_starts_one_worker_per_core_by_default(sample_kb_url, tmp_path):
    "With no --workers, `serve` starts one process per core, on one SQLite sessions file, and says so."
    cores, log = len(os.sched_getaffinity(0)), []
    with serve("--kb", sample_kb_url, "--sessions", f"sqlite:///{tmp_path}/s.sqlite", log=log) as url:
        end = time.monotonic() + 120
        while _workers(url) < cores and time.monotonic() < end: time.sleep(0.2)
        found = _workers(url)
        rs = [httpx.post(f"{url}/multiagent/sequential/chat", json={"question": Q, "session_id": f"d{i}"}, timeout=60)
              for i in range(4)]
        assert [r.status_code for r in rs] == [200] * 4
    assert found == (cores if cores > 1 else 0), found  # one worker is uvicorn's own process, with no child
    assert f"workers: {cores})" in log[0], log[0]

@contextlib.contextmanager
def busy_cores():
    "A process spinning on each core, as on a machine busy with other work."
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
    try: yield
    finally:
        for p in procs: p.kill(); p.wait()

def test_two_workers_start_on_a_busy_machine(sample_kb_url, tmp_path):
    "Every core taken: each worker still answers uvicorn's health checks while it starts, so none is killed and restarted."
    log = []
    with busy_cores(), serve("--kb", sample_kb_url, "--sessions", f"sqlite:///{tmp_path}/s.sqlite", "--workers", "2",
                             timeout=240, log=log) as url:
        rs = [httpx.post(f"{url}/multiagent/sequential/chat", json={"question": Q, "session_id": f"b{i}"}, timeout=120)
              for i in range(2)]
        assert [r.status_code for r in rs] == [200] * 2
    # only up to the stop: a SIGTERM to the whole group can end a worker just before uvicorn's supervisor sees its own
    started = log[0].split("SIGTERM")[0]
    assert "Application startup complete" in started and "died" not in started, log[0][-3000:]

async def _sqlite_conversations(url:str, sessions:int) -> list[dict]:
    "`sessions` conversations of three turns at once, every request on a new connection (so both workers take turns)."
    turns = ["What is a bulkhead?", "How should I size it?", "And what does it protect against?"]
    async with httpx.AsyncClient(timeout=120, headers={"Connection": "close"}) as c:
        async def talk(s):
            rs = [await c.post(f"{url}/multiagent/sequential/chat", json={"question": q, "session_id": f"two-{s}"}) for q in turns]
            assert [r.status_code for r in rs] == [200] * 3, [r.text for r in rs]
            return rs[-1].json()
        return await asyncio.gather(*(talk(s) for s in range(sessions)))

def test_two_workers_share_sqlite_sessions(sample_kb_url, tmp_path):
    "`--workers 2` on one SQLite sessions file: turns of one conversation land on either worker and see the earlier ones."
    with serve("--kb", sample_kb_url, "--sessions", f"sqlite:///{tmp_path}/s.sqlite", "--workers", "2") as url:
        last = asyncio.run(_sqlite_conversations(url, 16))
        assert all(r["metadata"]["history"]["turns_kept"] == 2 for r in last), [r["metadata"]["history"] for r in last]
        async def same_session(s):  # a client that does not wait: six turns of one session at once, on both workers
            async with httpx.AsyncClient(timeout=120, headers={"Connection": "close"}) as c:
                post = lambda: c.post(f"{url}/multiagent/sequential/chat", json={"question": Q, "session_id": s})
                sent = await asyncio.gather(*(post() for _ in range(6)))
                return [r.status_code for r in sent], (await post()).json()["metadata"]["history"]
        for s in ("eager-1", "eager-2", "eager-3"):
            codes, history = asyncio.run(same_session(s))
            assert set(codes) <= {200, 409} and 200 in codes, codes  # a 409: the other worker had the session
            # the seventh turn sees every turn taken: none was lost to a turn running at once on the other worker
            seen = sum(history.get(k, 0) for k in ("turns_kept", "turns_summarized", "turns_dropped", "turns_expired"))
            assert seen == codes.count(200), (codes, history)

def test_two_processes_share_sessions_in_postgres(sample_kb_url, pg_url):
    "Turn one on server A, the follow-up on server B: B sees A's turn; a fresh session on B does not."
    with fresh_database(pg_url, f"sessions_{os.getpid()}") as sessions, \
         serve("--kb", sample_kb_url, "--sessions", sessions) as a, serve("--kb", sample_kb_url, "--sessions", sessions) as b:
        ask = lambda url, q, s: httpx.post(f"{url}/multiagent/sequential/chat", json={"question": q, "session_id": s}, timeout=60).json()
        assert httpx.get(f"{a}/health", timeout=30).json()["sessions"] == "postgres"
        ask(a, "What is a bulkhead?", "shared")
        on_b, fresh_b, fresh_a = ask(b, "How should I size it?", "shared"), ask(b, "How should I size it?", "new-b"), ask(a, "How should I size it?", "new-a")
        assert on_b["citations"][0].startswith("bulkheads.md"), on_b
        assert fresh_b["answer"] == fresh_a["answer"] != on_b["answer"]

def _ingest_sample(kb:str) -> None:
    "The sample collection into the knowledge base `kb` (offline embeddings)."
    from gaia_mas.rag.kb.ingest import sample_dir
    r = subprocess.run([sys.executable, "-c", "import sys; from gaia_mas.rag.cli import rag_main; sys.exit(rag_main(sys.argv[1:]))",
                        "rag", "ingest", str(sample_dir()/"docs"), "--kb", kb, "--embeddings", "hash", "--no-progress"],
                       capture_output=True, text=True, timeout=300, env={**os.environ, "OPIK_TRACK_DISABLE": "true"})
    assert r.returncode == 0, r.stderr

async def _conversations(urls:list[str], sessions:int) -> list[list[dict]]:
    "`sessions` conversations at once, each turn on the next server in turn; every response of every conversation."
    turns = ["What is a bulkhead?", "How should I size it?", "And what does it protect against?"]
    async with httpx.AsyncClient(timeout=120, limits=httpx.Limits(max_connections=2 * sessions + 4)) as c:
        async def talk(s):
            out = []
            for i, q in enumerate(turns):
                url = urls[(s + i) % len(urls)]
                r = await c.post(f"{url}/multiagent/sequential/chat", json={"question": q, "session_id": f"load-{s}"})
                assert r.status_code == 200, r.text
                out.append({**r.json(), "served_by": url})
            return out
        return await asyncio.gather(*(talk(s) for s in range(sessions)))

def test_two_processes_under_concurrent_load_on_one_postgres(pg_url):
    "Knowledge base and sessions in one database; 16 conversations at once, their turns alternating between two servers."
    with fresh_database(pg_url, f"scaleout_{os.getpid()}") as db:
        _ingest_sample(db)
        with serve("--kb", db, "--workers", "1") as a, serve("--kb", db, "--workers", "1") as b:  # sessions: the kb database
            assert httpx.get(f"{a}/health", timeout=30).json()["sessions"] == "postgres"
            convs = asyncio.run(_conversations([a, b], 16))
    for conv in convs:
        assert {t["served_by"] for t in conv} == {a, b}
        assert [t["metadata"]["history"]["turns_kept"] for t in conv] == [0, 1, 2], "each turn saw the turns before it, whichever server served them"
        assert conv[1]["citations"][0].startswith("bulkheads.md"), conv[1]
    assert len({c[1]["answer"] for c in convs}) == 1, "the same conversation gives the same answers on either server"

def test_serve_refuses_to_start_without_a_key_or_with_a_bad_kb(sample_kb_url):
    "Preflight: one line naming the problem, exit code 2, no traceback, no password."
    env = {**os.environ, "OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "OPIK_TRACK_DISABLE": "true"}
    r = subprocess.run([*SERVE, "--provider", "openai", "--kb", sample_kb_url, "--port", str(free_port())], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "OPENAI_API_KEY" in r.stderr and "Traceback" not in r.stderr, r.stderr
    r = subprocess.run([*SERVE, "--provider", "scripted", "--kb", f"postgresql://app:s3cret@127.0.0.1:{free_port()}/kb",
                        "--port", str(free_port())], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "knowledge base" in r.stderr and "s3cret" not in r.stderr and "Traceback" not in r.stderr, r.stderr

def _listening_sockets(port:int) -> int:
    "How many distinct TCP sockets listen on `port` on this machine (from /proc/net/tcp and tcp6)."
    found = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(FileNotFoundError), open(name) as f:
            for row in list(f)[1:]:
                local, state, inode = row.split()[1], row.split()[3], row.split()[9]
                if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port: found.add(inode)
    return len(found)

def _worker_cpu(url:str) -> list[float]:
    "Each uvicorn worker's CPU seconds so far (user + system), for the `serve` behind `url`."
    return [sum(k.cpu_times()[:2]) for k in _worker_procs(url)]

@pytest.mark.skipif(sys.platform != "linux", reason="the kernel spreads connections over SO_REUSEPORT sockets on Linux")
def test_two_workers_listen_apart_and_share_a_burst(sample_kb_url, tmp_path):
    """`--workers 2`: each worker listens on a socket of its own, so the kernel spreads a burst of new connections over
    both (with one shared socket, one worker often took most of a burst); a second `serve` on the port is refused."""
    with serve("--kb", sample_kb_url, "--sessions", f"sqlite:///{tmp_path}/s.sqlite", "--workers", "2") as url:
        port, end = int(url.rsplit(":", 1)[1]), time.monotonic() + 120
        while _listening_sockets(port) < 2 and time.monotonic() < end: time.sleep(0.2)  # the second may still be warming
        assert _listening_sockets(port) == 2
        before = _worker_cpu(url)
        async def burst():
            async with httpx.AsyncClient(timeout=120, headers={"Connection": "close"}, limits=httpx.Limits(max_connections=80)) as c:
                return await asyncio.gather(*(c.post(f"{url}/multiagent/sequential/chat", json={"question": Q, "session_id": f"b{i}"})
                                              for i in range(64)))
        assert [r.status_code for r in asyncio.run(burst())] == [200] * 64
        spent = [b - a for a, b in zip(before, _worker_cpu(url))]
        assert len(spent) == 2 and min(spent) >= 0.25 * sum(spent), spent
        second = subprocess.run([*SERVE, "--provider", "scripted", "--kb", sample_kb_url, "--port", str(port), "--workers", "2"],
                                capture_output=True, text=True, timeout=120, env={**os.environ, "OPIK_TRACK_DISABLE": "true"})
        assert second.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in second.stderr, second.stderr
