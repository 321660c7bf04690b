"""Hostile clients against a real `gaia-mas serve`: a chunked 400 MB body without a key, a huge header, slow clients
that would hold every connection slot, and a key in the query string. The server answers, and its memory stays flat."""
import socket, time
import httpx, pytest

from rag_serve import PeakRSS, serve

pytestmark = [pytest.mark.process, pytest.mark.security]

KEY = "k-secret-7f3a"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from gaia_mas.rag.kb.ingest import sample_kb
    d = tmp_path_factory.mktemp("serve")
    with serve("--kb", sample_kb().url, "--sessions", f"sqlite:///{d}/s.sqlite", "--workers", "1",  # limits are per process
               env={"GAIA_MAS_API_KEY": KEY, "GAIA_MAS_HEADER_TIMEOUT": "1", "GAIA_MAS_BODY_TIMEOUT": "1"}) as s: yield s


def _connect(url:str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=30)


def _status(s:socket.socket) -> str:
    "The status line the server sent, '' if it closed without one, 'no answer' if it sent nothing for 30 s."
    try: return s.recv(65536).decode("latin-1").split("\r\n", 1)[0]
    except TimeoutError: return "no answer"
    except OSError: return ""


def _logged(lines:list, *texts:str) -> str:
    "The server's output once it holds each of `texts` (or 30 s passed): a request's log line follows its answer."
    end = time.monotonic() + 30
    while not all(t in "".join(lines) for t in texts) and time.monotonic() < end: time.sleep(0.02)
    return "".join(lines)


def test_chunked_body_is_refused_while_it_streams(server):
    url, proc, _ = server
    with PeakRSS(proc.pid) as m:
        s = _connect(url)
        s.sendall(b"POST /multiagent/sequential/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n")
        chunk, sent = b"%x\r\n" % 2**20 + b"x" * 2**20 + b"\r\n", 0
        try:
            while sent < 400:  # 400 MiB, no key: the body limit answers before authentication
                s.sendall(chunk); sent += 1
        except OSError: pass
        status = _status(s); s.close()
    print(f"chunked 400 MiB body: {status!r} after {sent} MiB sent; server {m}")
    assert " 413 " in status and sent < 400 and m.growth < 64


def test_declared_length_over_the_limit(server):
    r = httpx.post(f"{server[0]}/multiagent/sequential/chat", content=b"x" * 70_000)
    assert r.status_code == 413 and "over" in r.json()["error"]


def test_huge_header_is_refused(server):
    url, proc, _ = server
    with PeakRSS(proc.pid) as m:
        s = _connect(url); s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
        sent = 0
        try:
            while sent < 100:  # up to 100 MiB of one header
                s.sendall(b"a" * 2**20); sent += 1
        except OSError: pass
        status = _status(s); s.close()
    print(f"100 MiB header: {status!r} after {sent} MiB sent; server {m}")
    assert sent < 100 and m.growth < 64 and (status == "" or " 400 " in status or " 431 " in status)


def test_slow_clients_are_closed_and_do_not_hold_the_slots(server):
    url, proc, _ = server
    with PeakRSS(proc.pid) as m:
        slow = [_connect(url) for _ in range(300)]  # more than limit_concurrency (256)
        for s in slow: s.sendall(b"GET /health HTTP/1.1\r\nHo")  # and then nothing more
        closed = sum(1 for s in slow if _status(s) == "")  # each read waits for the 1 s header deadline to close it
        r = httpx.get(f"{url}/health", timeout=30)
        for s in slow: s.close()
    print(f"300 slow clients: {closed} closed by the server; then /health {r.status_code}; server {m}")
    assert closed == 300 and r.status_code == 200


def test_slow_body_is_timed_out(server):
    s = _connect(server[0])
    s.sendall(b"POST /multiagent/sequential/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Content-Length: 1000\r\n\r\n{\"question\"")  # and then nothing: the body deadline is 1 s in this server
    status = _status(s); s.close()
    assert " 408 " in status, status


def test_key_in_query_string_is_refused_and_never_logged(server):
    url, _, lines = server
    r = httpx.post(f"{url}/multiagent/sequential/chat?api_key={KEY}", json={"question": "hi"})
    assert r.status_code == 400 and "Authorization" in r.json()["error"]
    assert httpx.get(f"{url}/health?x=1&token={KEY}").status_code == 400
    log = _logged(lines, "api_key=***", "token=***")
    assert KEY not in log and "api_key=***" in log


def test_key_from_a_file_and_verbose_logs(tmp_path):
    from gaia_mas.rag.kb.ingest import sample_kb
    (tmp_path/"key").write_text(KEY + "\n")
    with serve("--kb", sample_kb().url, "--sessions", f"sqlite:///{tmp_path}/s.sqlite", "--api-key-file",
               str(tmp_path/"key"), "-v") as (url, proc, lines):
        assert httpx.post(f"{url}/multiagent/sequential/chat", json={"question": "hi"}, timeout=60).status_code == 401
        r = httpx.post(f"{url}/multiagent/sequential/chat", json={"question": "What is a bulkhead?"},
                       headers={"X-API-Key": KEY}, timeout=60)
        assert r.status_code == 200
        _logged(lines, "request_id=")
    assert KEY not in " ".join(proc.args) and any("request_id=" in l for l in lines), "".join(lines[-20:])


def test_answers_that_outlast_the_body_deadline_are_not_cut(tmp_path):
    "The body deadline bounds the upload of a body, not the answer: a stream longer than it still ends with its answer."
    from gaia_mas.rag.kb.ingest import sample_kb
    with serve("--kb", sample_kb().url, "--sessions", f"sqlite:///{tmp_path}/s.sqlite", "--latency", "0.6",
               env={"GAIA_MAS_API_KEY": KEY, "GAIA_MAS_BODY_TIMEOUT": "1"}) as (url, _, _lines):
        hdr, body = {"X-API-Key": KEY}, {"question": "What is a bulkhead?"}
        with httpx.stream("POST", f"{url}/multiagent/sequential/chat/stream", json=body, headers=hdr, timeout=60) as r:
            t0 = time.monotonic(); text = "".join(r.iter_text()); took = time.monotonic() - t0
        assert r.status_code == 200 and "event: answer" in text, text[-300:]
        assert took > 1, took  # it did outlast the 1 s body deadline
        r = httpx.post(f"{url}/multiagent/sequential/chat", json=body, headers=hdr, timeout=60)
        assert r.status_code == 200 and r.json()["answer"]


def test_access_log_masks_every_query_value(server):
    "A key sent as a query parameter of any name (one the key guard does not know, too) never reaches the access log."
    url, _, lines = server
    names = ("auth", "bearer", "authorization", "api_token", "apiToken", "access-token", "sig", "x")
    for name in names:
        httpx.get(f"{url}/kb/documents", params={name: KEY}, headers={"X-API-Key": KEY}, timeout=30)
    log = _logged(lines, *(f"/kb/documents?{n}=***" for n in names))
    assert KEY not in log.replace(f"X-API-Key: {KEY}", ""), log[-3000:]
    assert all(f"/kb/documents?{n}=***" in log for n in names), log[-3000:]
