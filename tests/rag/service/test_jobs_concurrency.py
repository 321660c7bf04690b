"""One knowledge base under concurrent writers: async uploads of many small files, searches, deletes and `rag embed`
at once, against a real `gaia-mas serve`; afterwards the SQLite file passes `integrity_check` (PostgreSQL: every row is
there), nothing is lost and nothing answered 500. On a Python whose sqlite3 cannot load extensions the knowledge base
uses pysqlite3, and any module that opened the same file with the standard sqlite3 corrupted it."""
import concurrent.futures as cf, os, sqlite3, subprocess, time
from pathlib import Path
import httpx, pytest

from cli_support import GAIA, cli_env
from gaia_mas.core.pg_server import fresh_database
from rag_serve import serve

SHIM = Path(__file__).resolve().parents[2]/"support"/"sqlite_without_extensions"
UPLOADS, FILES, DELETED = 8, 60, 20  # async uploads, files in each, documents deleted while they run


@pytest.fixture(params=["sqlite", "sqlite-pysqlite3", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request, tmp_path):
    "(knowledge base URL, extra environment of its processes) per engine."
    env = {"GAIA_MAS_CACHE": str(tmp_path/"cache"), "TMPDIR": str(tmp_path)}
    if request.param == "sqlite-pysqlite3": env["PYTHONPATH"] = str(SHIM)
    if request.param != "postgres": yield f"sqlite:///{tmp_path/'kb.sqlite'}", env; return
    with fresh_database(request.getfixturevalue("pg_url"), f"kb_jobs_{os.getpid()}") as url: yield url, env


def _files(tag:str, n:int) -> list:
    return [("files", (f"{tag}-{j}.md", f"# Note {tag} {j}\n\nCircuit breakers and bulkheads, note {tag}/{j}.\n".encode(),
                       "text/markdown")) for j in range(n)]


def _wait(c:httpx.Client, job_id:str, end:float) -> dict:
    "The job once it is no longer running (or the time is up)."
    while True:
        r = c.get(f"/kb/jobs/{job_id}"); assert r.status_code == 200, (r.status_code, r.text)
        if r.json()["status"] != "running" or time.monotonic() > end: return r.json()
        time.sleep(0.5)


def _count(url:str) -> tuple[str, int]:
    "(integrity, documents) of the knowledge base, read by a plain client."
    if url.startswith("postgresql"):
        import psycopg
        with psycopg.connect(url) as db: return "ok", db.execute("select count(*) from documents").fetchone()[0]
    with sqlite3.connect(url.removeprefix("sqlite:///")) as db:  # the test's own reader, after the server stopped
        return db.execute("pragma integrity_check").fetchone()[0], db.execute("select count(*) from documents").fetchone()[0]


@pytest.mark.process
@pytest.mark.security
@pytest.mark.timeout(900)
def test_concurrent_uploads_searches_deletes_and_embed_keep_the_knowledge_base_whole(store, tmp_path):
    url, env = store
    with serve("--kb", url, "--embeddings", "hash", env=env, timeout=180) as (base, proc, lines), \
         httpx.Client(base_url=base, timeout=300) as c:
        assert c.post("/kb/documents", files=_files("first", DELETED)).status_code == 201
        embed = subprocess.Popen([*GAIA, "rag", "embed", "--kb", url, "--embeddings", "hash"], env=cli_env(**env),
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        with cf.ThreadPoolExecutor(UPLOADS + 4) as pool:
            ups = [pool.submit(c.post, "/kb/documents?async=true", files=_files(f"u{i}", FILES)) for i in range(UPLOADS)]
            dels = [pool.submit(c.delete, "/kb/documents", params={"source": f"uploads/first-{j}.md"}) for j in range(DELETED)]
            finds = [pool.submit(c.get, "/kb/search", params={"q": "circuit breaker"}) for _ in range(20)]
            codes = [f.result().status_code for f in [*ups, *dels, *finds]]
        assert codes == [202] * UPLOADS + [200] * (DELETED + 20), codes
        end = time.monotonic() + 600
        jobs = [_wait(c, f.result().json()["job_id"], end) for f in ups]
        assert [j["status"] for j in jobs] == ["done"] * UPLOADS, [j.get("error") for j in jobs]
        assert embed.wait(timeout=300) == 0, embed.stdout.read()
        total = c.get("/kb/documents").json()["total"]
    assert not any(" 500 " in l or "Traceback" in l for l in lines), "".join(lines)[-3000:]
    assert _count(url) == ("ok", UPLOADS * FILES) and total == UPLOADS * FILES
    assert not list(tmp_path.glob("gaia_mas_upload_*")), "an upload left its temporary folder"


@pytest.mark.security
def test_a_job_that_cannot_start_removes_its_uploaded_files(tmp_path):
    "A job whose row cannot be written (a locked or broken database) leaves no temporary folder behind."
    import asyncio, types
    from gaia_mas.rag.service.documents_api import start_job
    class Broken:
        def create(self, total): raise OSError("the jobs table cannot be written")
    tmp = tmp_path/"gaia_mas_upload_x"; tmp.mkdir(); (tmp/"a.md").write_text("# A\n\nuploaded\n")
    with pytest.raises(OSError): asyncio.run(start_job(types.SimpleNamespace(jobs=Broken()), None, [], {}, tmp))
    assert not tmp.exists()


def _leftovers(tmp_path:Path) -> list[Path]:
    "Upload folders under the test's temporary folder and cache, wherever a `serve` keeps them."
    return [p for p in tmp_path.rglob("gaia_mas_upload_*") if p.is_dir()]


@pytest.mark.process
@pytest.mark.security
def test_a_worker_killed_mid_upload_leaves_nothing_after_the_next_start(tmp_path):
    "`kill -9` while a 6 MiB file streams in: its folder stays until the next `serve` starts, which removes it."
    import signal, socket
    import psutil
    env = {"GAIA_MAS_CACHE": str(tmp_path/"cache"), "TMPDIR": str(tmp_path), "HOME": str(tmp_path)}
    kb = f"sqlite:///{tmp_path/'kb.sqlite'}"
    body = b"# Big\n\n" + b"circuit breakers and bulkheads " * (6 * 2**20 // 31)
    head_of = lambda port: (f"POST /kb/documents HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: multipart/form-data; "
                            f"boundary=b0\r\nContent-Length: {len(body) + 200}\r\nConnection: close\r\n\r\n").encode()
    part = b'--b0\r\nContent-Disposition: form-data; name="files"; filename="big.md"\r\nContent-Type: text/markdown\r\n\r\n'
    with serve("--kb", kb, "--workers", "1", "--max-upload-mb", "50", env=env) as (url, proc, _):
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            s.sendall(head_of(port) + part + body[: len(body) // 2])  # half of it, then the process dies
            end = time.monotonic() + 60
            while not any(f.is_file() and f.stat().st_size > 2**20 for d in _leftovers(tmp_path) for f in d.iterdir()):
                assert time.monotonic() < end, "the upload never reached the disk"; time.sleep(0.1)
            for p in [*psutil.Process(proc.pid).children(recursive=True), psutil.Process(proc.pid)]: p.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
    assert _leftovers(tmp_path), "the killed upload left nothing to clean up"
    with serve("--kb", kb, "--workers", "1", env=env):
        assert _leftovers(tmp_path) == [], "the next start left the dead worker's upload folder behind"


@pytest.mark.security
def test_a_failed_job_names_no_host_or_process(tmp_path):
    "A job whose process stopped is reported failed, without the host name or process id of the worker that ran it."
    import socket
    from gaia_mas.rag.service.jobs import JobStore
    store = JobStore(f"sqlite:///{tmp_path/'kb.sqlite'}", lease=0.05)
    job = store.create(3)
    time.sleep(0.2)  # no heartbeat: the lease runs out
    seen = store.get(job)
    assert seen["status"] == "failed" and "send the files again" in seen["error"], seen
    assert socket.gethostname() not in seen["error"] and str(os.getpid()) not in seen["error"], seen["error"]
