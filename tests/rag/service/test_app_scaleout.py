"""The service across processes and hosts, and through failures: a turn sent again with its `Idempotency-Key` runs
once; a turn that waits too long for its session gets a 409 with `Retry-After`; two hosts on one PostgreSQL (no shared
folder) run the turns of one session one at a time, and a turn reaching the other host meanwhile gets a 409; eight
turns of one conversation sent 100 ms apart to `serve --workers 2` are stored and answered in the order they arrived; upload jobs answer on every worker, and the job of a process
that died is reported failed; SIGTERM drains: the answer in flight finishes, new requests and /health get a 503, also
when Ctrl+C or systemd signal every process of `serve --workers 2` at once."""
import asyncio, os, signal, time
import httpx, pytest

from gaia_mas.rag.workflows.served import SystemBase
from gaia_mas.core.pg_server import fresh_database
from rag_serve import serve

from gaia_mas.rag.service.app import create_app
from gaia_mas.rag.workflows.system import scripted_system

Q = "What is a circuit breaker?"
DOC = b"# Bulkheads\n\n## Idea\n\nA bulkhead isolates each dependency's resources: one slow service cannot take all.\n"


def _client(app): return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://service", timeout=60)


def test_a_turn_sent_again_with_its_key_runs_once():
    async def go():
        system = scripted_system()
        async with _client(create_app(system)) as c:
            post = lambda key, q=Q, path="/multiagent/sequential/chat": c.post(
                path, json={"question": q, "session_id": "s1"}, headers={"Idempotency-Key": key})
            first, again = await post("turn-1"), await post("turn-1")
            async with c.stream("POST", "/multiagent/sequential/chat/stream", json={"question": Q, "session_id": "s1"},
                                headers={"Idempotency-Key": "turn-1"}) as r:
                streamed = [line async for line in r.aiter_lines() if line.startswith("event:")]
            other = await post("turn-2", "How does it recover?")
            bad = await post("no spaces")
            return first, again, streamed, other, bad, await system.history("s1")
    first, again, streamed, other, bad, history = asyncio.run(go())
    assert first.status_code == again.status_code == 200
    assert again.json()["answer"] == first.json()["answer"] and again.json()["metadata"]["replayed"] is True
    assert streamed == ["event: answer"], streamed  # the stream's retry is the recorded answer alone
    assert "replayed" not in other.json()["metadata"]
    assert [t.get("id") for t in history] == ["turn-1", "turn-2"], history
    assert bad.status_code == 400 and "Idempotency-Key" in bad.json()["error"]


def test_a_turn_that_waits_too_long_for_its_session_gets_409():
    class Slow(SystemBase):
        async def aask(self, q, s, p):
            await asyncio.sleep(0.5); return {"answer": "done", "pattern": "sequential", "session_id": s, "metadata": {}}
    async def go():
        async with _client(create_app(Slow(), turn_wait=0.1)) as c:
            post = lambda: c.post("/multiagent/sequential/chat", json={"question": Q, "session_id": "busy"})
            return await asyncio.gather(post(), post())
    rs = sorted(asyncio.run(go()), key=lambda r: r.status_code)
    assert [r.status_code for r in rs] == [200, 409], [r.text for r in rs]
    assert rs[1].headers["retry-after"] == "5" and "busy" in rs[1].json()["error"]


@pytest.mark.process
def test_two_hosts_on_one_postgres_run_a_sessions_turns_one_at_a_time(pg_url, tmp_path):
    """Two `serve` processes with separate homes (two hosts: no lock folder in common); six turns of one session at once:
    those taken are all kept, the others are refused with a 409."""
    from gaia_mas.rag.kb.ingest import sample_kb
    kb = sample_kb().url
    with fresh_database(pg_url, f"hosts_{os.getpid()}") as sessions, \
         serve("--kb", kb, "--sessions", sessions, "--latency", "0.02", env={"HOME": str(tmp_path/"a")}) as (a, *_), \
         serve("--kb", kb, "--sessions", sessions, "--latency", "0.02", env={"HOME": str(tmp_path/"b")}) as (b, *_):
        async def eager(s):
            async with httpx.AsyncClient(timeout=120) as c:
                post = lambda url: c.post(f"{url}/multiagent/sequential/chat", json={"question": Q, "session_id": s})
                codes = [r.status_code for r in await asyncio.gather(*(post((a, b)[i % 2]) for i in range(6)))]
                return codes, (await post(a)).json()["metadata"]["history"]
        for s in ("two-hosts-1", "two-hosts-2"):
            codes, history = asyncio.run(eager(s))
            assert set(codes) <= {200, 409} and 200 in codes, codes  # a 409: the other host had the session
            seen = sum(history.get(k, 0) for k in ("turns_kept", "turns_summarized", "turns_dropped", "turns_expired"))
            assert seen == codes.count(200), f"the seventh turn saw {seen} of the {codes.count(200)} taken: {history}"


async def _eight_turns(url:str, session:str) -> list[httpx.Response]:
    "Eight turns of one conversation, 100 ms apart, each on a new connection (so both workers take some), keyed t0..t7."
    async with httpx.AsyncClient(timeout=120, headers={"Connection": "close"}) as c:
        async def turn(i):
            await asyncio.sleep(0.1 * i)
            return await c.post(f"{url}/multiagent/sequential/chat", headers={"Idempotency-Key": f"t{i}"},
                                json={"question": f"{Q} (turn {i})", "session_id": session})
        return await asyncio.gather(*(turn(i) for i in range(8)))

async def _stored_turns(sessions:str, session:str) -> list[str]:
    "The keys of a session's turns, in the order its history holds them."
    from gaia_mas.rag.workflows.system import open_sessions
    async with open_sessions(sessions) as saver:
        return [t.get("id") for t in await scripted_system(saver).history(session)]

@pytest.mark.process
def test_one_conversation_keeps_its_order_across_two_workers(tmp_path):
    """Eight turns sent 100 ms apart to `serve --workers 2`: the ones taken are stored and answered in the order they
    arrived (each answer saw exactly the turns taken before it); a turn that reaches the other worker while one runs
    gets a 409 with `Retry-After`, and none is lost or reordered."""
    sessions = f"sqlite:///{tmp_path}/s.sqlite"
    with serve("--kb", f"sqlite:///{tmp_path}/kb.sqlite", "--sessions", sessions, "--workers", "2", "--latency", "0.1",
               env={"HOME": str(tmp_path)}) as (url, *_):
        rs = []
        for n in range(3):  # the turns that land on the other worker while one runs differ from run to run
            rs = asyncio.run(_eight_turns(url, f"order-{n}"))
            if {r.status_code for r in rs} == {200, 409}: break
        codes = [r.status_code for r in rs]
        assert set(codes) <= {200, 409}, [r.text for r in rs]
        assert all(r.headers["retry-after"] == "1" and "another server process" in r.json()["error"]
                   for r in rs if r.status_code == 409), [r.text for r in rs]
        taken = [f"t{i}" for i, c in enumerate(codes) if c == 200]
        seen = [sum(r.json()["metadata"]["history"].get(k, 0) for k in ("turns_kept", "turns_summarized", "turns_dropped"))
                for r in rs if r.status_code == 200]
    assert seen == list(range(len(taken))), f"answers saw {seen} earlier turns; taken: {taken}, codes: {codes}"
    assert asyncio.run(_stored_turns(sessions, f"order-{n}")) == taken, codes


def _poll_job(url:str, job_id:str, timeout:float=60) -> list[dict]:
    "Every view of the job until it ends, each poll on a new connection (so any worker may answer)."
    seen, end = [], time.monotonic() + timeout
    while time.monotonic() < end:
        r = httpx.get(f"{url}/kb/jobs/{job_id}", headers={"Connection": "close"}, timeout=30)
        seen.append(r.json() | {"http": r.status_code})
        if r.status_code != 200 or r.json()["status"] != "running": return seen
        time.sleep(0.1)
    return seen


@pytest.mark.process
def test_upload_jobs_answer_on_every_worker(tmp_path):
    with serve("--kb", f"sqlite:///{tmp_path}/kb.sqlite", "--workers", "2", env={"HOME": str(tmp_path)}) as (url, *_):
        files = [("files", (f"doc{i}.md", DOC.replace(b"Idea", f"Idea {i}".encode()))) for i in range(20)]
        r = httpx.post(f"{url}/kb/documents", params={"async": "true"}, files=files, timeout=60)
        assert r.status_code == 202, r.text
        views = _poll_job(url, r.json()["job_id"])
        views += [httpx.get(f"{url}/kb/jobs/{r.json()['job_id']}", headers={"Connection": "close"}).json() | {"http": 200}
                  for _ in range(10)]  # the finished job, from either worker
    assert all(v["http"] == 200 for v in views), [v for v in views if v["http"] != 200][:2]
    assert views[-1]["status"] == "done" and views[-1]["done"] == 20


@pytest.mark.process
def test_the_job_of_a_process_that_died_is_reported_failed(tmp_path):
    "Host A takes a long upload and is killed; host B, on the same knowledge base, reports the job failed, naming why."
    kb, env = f"sqlite:///{tmp_path}/kb.sqlite", {"GAIA_MAS_JOB_LEASE": "3", "HOME": str(tmp_path)}
    with serve("--kb", kb, env=env) as (a, proc_a, _), serve("--kb", kb, env=env) as (b, *_):
        files = [("files", (f"doc{i}.md", DOC * 200)) for i in range(60)]
        r = httpx.post(f"{a}/kb/documents", params={"async": "true"}, files=files, timeout=60)
        assert r.status_code == 202, r.text
        os.killpg(proc_a.pid, signal.SIGKILL)  # the whole host, mid-job
        views = _poll_job(b, r.json()["job_id"])
    assert views[-1]["status"] == "failed", views[-1]
    assert "stopped before it finished" in views[-1]["error"] and "send the files again" in views[-1]["error"]


def _turn_then_stop(url:str, stop, under_way:float, probe=None) -> tuple[list, float, object]:
    "Stream a turn; `under_way` seconds in, call `stop()`, then `probe(client)`; the turn's events, seconds, probe's result."
    async def go():
        async with httpx.AsyncClient(timeout=120) as c:
            async def streamed():
                async with c.stream("POST", f"{url}/multiagent/sequential/chat/stream",
                                    json={"question": Q, "session_id": "drain"}) as r:
                    return [line async for line in r.aiter_lines() if line.startswith("event:")]
            t0, running = time.monotonic(), asyncio.create_task(streamed())
            await asyncio.sleep(under_way)
            stop()
            seen = await probe(c) if probe else None
            return await running, time.monotonic() - t0, seen
    return asyncio.run(go())


@pytest.mark.process
def test_sigterm_drains_then_stops(tmp_path):
    with serve("--kb", f"sqlite:///{tmp_path}/kb.sqlite", "--latency", "0.4", "--grace", "30", "--workers", "1",
               env={"HOME": str(tmp_path)}) as (url, proc, lines):  # one process signalled (workers: the test below)
        async def refused_and_health(c):
            await asyncio.sleep(0.3)
            return await c.post(f"{url}/multiagent/sequential/chat", json={"question": Q}), await c.get(f"{url}/health")
        events, _, (refused, health) = _turn_then_stop(url, lambda: proc.send_signal(signal.SIGTERM), 0.5,
                                                       refused_and_health)
        proc.wait(timeout=30)
    assert events[-1] == "event: answer", events  # the answer in flight was finished
    assert refused.status_code == 503 and refused.headers["retry-after"] == "1", refused.text
    assert health.status_code == 503 and health.json()["status"] == "draining"
    assert "Traceback" not in "".join(lines), "".join(lines)[-2000:]


@pytest.mark.process
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_sent_to_every_process_still_drains_with_workers(tmp_path, sig):
    """Ctrl+C in a terminal and systemd's `stop` signal every process of `serve --workers 2` at once: each worker drains,
    and the supervisor's own signal to it is the same stop, so a turn longer than uvicorn's 5 s shutdown still finishes."""
    with serve("--kb", f"sqlite:///{tmp_path}/kb.sqlite", "--workers", "2", "--latency", "4", "--grace", "60",
               env={"HOME": str(tmp_path)}) as (url, proc, lines):
        events, took, _ = _turn_then_stop(url, lambda: os.killpg(proc.pid, sig), 1)
        proc.wait(timeout=60)
    assert took > 9 and events[-1] == "event: answer", (took, events, "".join(lines)[-3000:])
    assert proc.returncode == 0 and "Traceback" not in "".join(lines), "".join(lines)[-3000:]
