"""Which processes a command leaves behind when it is stopped: every process that inherited a tag in its environment
(the command's children, grandchildren and anything they spawned), and those of them reparented to pid 1."""
import contextlib, os, signal, subprocess, time, uuid
import psutil

TAG = "GAIA_MAS_TEST_TAG"


def tagged(tag:str) -> list[psutil.Process]:
    "The live processes whose environment carries `TAG=tag` (zombies left out: they are already gone)."
    out = []
    for p in psutil.process_iter(["pid", "ppid", "status"]):
        with contextlib.suppress(psutil.Error):
            if p.info["status"] != psutil.STATUS_ZOMBIE and p.environ().get(TAG) == tag: out.append(p)
    return out


def describe(ps:list[psutil.Process]) -> str:
    lines = []
    for p in ps:
        with contextlib.suppress(psutil.Error):
            lines.append(f"pid {p.pid} (parent {p.ppid()}): {' '.join(p.cmdline())[:160]}")
    return "\n".join(lines)


class Tagged:
    "A command started with a unique tag in its environment, so that everything it spawns can be found again."
    def __init__(self, args:list[str], env:dict|None=None, cwd=None):
        self.tag = uuid.uuid4().hex
        self.orphans_before = {p.pid for p in psutil.process_iter(["ppid"]) if p.info["ppid"] == 1}
        # Ctrl-C's default, as a terminal starts a command: a pytest worker's children may inherit SIGINT ignored
        self.proc = subprocess.Popen(args, env={**os.environ, **(env or {}), TAG: self.tag}, cwd=cwd,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))

    def processes(self) -> list[psutil.Process]: return tagged(self.tag)

    def stop(self, sig:int, timeout:float=60) -> tuple[int, list[psutil.Process]]:
        "Send `sig` to the command's own process only (as systemd and Kubernetes do); its exit code and what is left."
        self.proc.send_signal(sig)
        try: code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired: code = None
        end = time.monotonic() + 10  # a child may take a moment to notice that its parent is gone
        while (left := self.processes()) and time.monotonic() < end: time.sleep(0.2)
        return code, left

    def new_orphans(self, left:list[psutil.Process]) -> list[psutil.Process]:
        "Those of `left` reparented to pid 1 since the command started."
        out = []
        for p in left:
            with contextlib.suppress(psutil.Error):
                if p.ppid() == 1 and p.pid not in self.orphans_before: out.append(p)
        return out

    def kill_all(self) -> None:
        "Clean up after a failed test: SIGKILL to every tagged process."
        for p in [self.proc, *self.processes()]:
            with contextlib.suppress(Exception): os.kill(p.pid, signal.SIGKILL)
        with contextlib.suppress(Exception): self.proc.wait(timeout=10)
