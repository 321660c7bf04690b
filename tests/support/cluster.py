"""Hosts for scale-out tests: `gaia-mas serve` processes, each in a network namespace the test creates (a bridge with a
/24 of its own, a veth pair per host), or on loopback ports where namespaces cannot be made; and HAProxy in front.
Only the addresses and names made here are touched, and all of them are removed at the end."""
import contextlib, ipaddress, os, random, shutil, signal, subprocess, sys, time
from pathlib import Path
import httpx

from gaia_mas.core.pg_server import free_port

SERVE = [sys.executable, "-c", "import sys; from gaia_mas.cli import main; sys.exit(main())", "serve"]


def _ip(*args:str, check:bool=True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


def netns_problem() -> str | None:
    "Why network namespaces with a bridge cannot be made here; None if they can."
    if os.geteuid() != 0: return "creating network namespaces needs root"
    if not shutil.which("ip"): return "no `ip` command (iproute2)"
    ns, br = f"gmprobe{os.getpid() % 100000}", f"gmpb{os.getpid() % 100000}"
    try:
        for args in (("netns", "add", ns), ("link", "add", br, "type", "bridge")):
            if (r := _ip(*args, check=False)).returncode: return f"`ip {' '.join(args)}` failed: {r.stderr.strip()}"
        return None
    finally: _ip("netns", "del", ns, check=False); _ip("link", "del", br, check=False)


def _free_subnet() -> ipaddress.IPv4Network:
    "A /24 in 10.0.0.0/8 that no route of this machine covers."
    routes = [ipaddress.ip_network(w.split()[0], strict=False) for w in _ip("-4", "route").stdout.splitlines()
              if w.split() and w.split()[0][0].isdigit()]
    for _ in range(200):
        net = ipaddress.ip_network(f"10.{random.randint(100, 250)}.{random.randint(0, 255)}.0/24")
        if not any(net.overlaps(r) for r in routes): return net
    raise RuntimeError("no free /24 in 10.0.0.0/8")


class Host:
    "One host: where `serve` runs (a namespace, or loopback), its address, its home folder, its process."
    def __init__(self, name:str, addr:str, port:int, prefix:list[str], home:Path):
        self.name, self.addr, self.port, self.prefix, self.home, self.proc = name, addr, port, prefix, home, None
        self.url = f"http://{addr}:{port}"

    def start(self, *args:str, env:dict|None=None) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        bind = "0.0.0.0" if self.prefix else self.addr
        self.log = open(self.home/"serve.log", "a")
        consent = ["--allow-keyless"] if self.prefix else []  # keyless on purpose, in a namespace of its own
        self.proc = subprocess.Popen([*self.prefix, *SERVE, "--host", bind, "--port", str(self.port), *consent, *args],
                                     env={**os.environ, "OPIK_TRACK_DISABLE": "true", "HOME": str(self.home), **(env or {})},
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_healthy(self, timeout:float=120) -> None:
        end = time.monotonic() + timeout
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/health", timeout=3).status_code == 200: return
            if self.proc.poll() is not None or time.monotonic() > end:
                raise RuntimeError(f"{self.name} did not start:\n{(self.home/'serve.log').read_text()[-3000:]}")
            time.sleep(0.3)

    def crash(self) -> None:
        "SIGKILL to every process of the host at once, as a power cut would."
        with contextlib.suppress(ProcessLookupError): os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self, timeout:float=120) -> float:
        "SIGTERM to the `serve` process alone, as systemd does; the seconds it took to exit."
        t0 = time.monotonic(); self.proc.send_signal(signal.SIGTERM); self.proc.wait(timeout=timeout)
        return time.monotonic() - t0

    def cleanup(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError): os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)


@contextlib.contextmanager
def namespaces(n:int, root:Path):
    "`n` hosts in network namespaces on a bridge of their own; yields (the bridge's address, the hosts)."
    tag, net = f"gm{os.getpid() % 100000}", _free_subnet()
    gw, br, made = str(net[1]), f"{tag}br", []
    try:
        _ip("link", "add", br, "type", "bridge"); made.append(("link", br))
        _ip("addr", "add", f"{gw}/24", "dev", br); _ip("link", "set", br, "up")
        hosts = []
        for i in range(n):
            ns, veth, addr = f"{tag}h{i}", f"{tag}v{i}", str(net[11 + i])
            _ip("netns", "add", ns); made.append(("netns", ns))
            _ip("link", "add", veth, "type", "veth", "peer", "name", f"{veth}p"); made.append(("link", veth))
            _ip("link", "set", f"{veth}p", "netns", ns); _ip("link", "set", veth, "master", br)
            _ip("link", "set", veth, "up")
            for args in (("addr", "add", f"{addr}/24", "dev", f"{veth}p"), ("link", "set", f"{veth}p", "up"),
                         ("link", "set", "lo", "up")): _ip("-n", ns, *args)
            hosts.append(Host(f"host{i + 1}", addr, 8000, ["ip", "netns", "exec", ns], root/f"host{i + 1}"))
        yield gw, hosts
    finally:
        for h in locals().get("hosts", []): h.cleanup()
        for kind, name in reversed(made):
            if kind == "netns":
                for pid in _ip("netns", "pids", name, check=False).stdout.split():
                    with contextlib.suppress(ProcessLookupError): os.kill(int(pid), signal.SIGKILL)
            _ip(kind, "del", name, check=False)


@contextlib.contextmanager
def loopback(n:int, root:Path):
    "`n` hosts on loopback ports, each with a home of its own; yields ('127.0.0.1', the hosts)."
    hosts = [Host(f"host{i + 1}", "127.0.0.1", free_port(), [], root/f"host{i + 1}") for i in range(n)]
    try: yield "127.0.0.1", hosts
    finally:
        for h in hosts: h.cleanup()


HAPROXY_CFG = """\
global
    maxconn 2048
defaults
    mode http
    timeout connect 2s
    timeout client 200s
    timeout server 200s
    timeout http-request 10s
    retries 5
    option redispatch 1
    retry-on conn-failure empty-response 503
frontend rag
    bind {bind}
    default_backend serve
backend serve
    balance leastconn
    option httpchk GET /health
    http-check expect status 200
    default-server inter 500ms fall 2 rise 2 observe layer4 error-limit 1 on-error mark-down
    http-response set-header X-Served-By %[srv_name]
{servers}
"""


def haproxy_config(bind:str, servers:list[tuple[str, str]]) -> str:
    "The balancer's configuration: leastconn over `servers` [(name, addr:port)], health checks on /health, retries."
    lines = "\n".join(f"    server {name} {addr} check" for name, addr in servers)
    return HAPROXY_CFG.format(bind=bind, servers=lines)


@contextlib.contextmanager
def haproxy(servers:list[tuple[str, str]], folder:Path):
    "HAProxy on a free loopback port in front of `servers`; yields its URL."
    port = free_port(); cfg = folder/"haproxy.cfg"
    cfg.write_text(haproxy_config(f"127.0.0.1:{port}", servers))
    subprocess.run(["haproxy", "-c", "-q", "-f", str(cfg)], check=True)
    proc = subprocess.Popen(["haproxy", "-db", "-f", str(cfg)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 30
        while True:
            with contextlib.suppress(httpx.HTTPError):
                httpx.get(f"http://127.0.0.1:{port}/health", timeout=2); break
            if time.monotonic() > end or proc.poll() is not None: raise RuntimeError("haproxy did not start")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate(); proc.wait(timeout=30)
