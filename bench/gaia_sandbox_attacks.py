"""The expert's sandbox and the file tools against hostile code and task files that lie: status, peak memory and time.

    python bench/gaia_sandbox_attacks.py

Each attack runs in a child process of its own, so its peak memory (the child's, plus the sandbox's processes, sampled)
is its alone. Run it as the user who runs gaia-mas: as root the sandbox's worker is `nobody`, as a user it is in a user
namespace of its own.
"""
import json, os, resource, subprocess, sys, tempfile, time

ATTACKS = {
"keys in /proc/*/environ": """
from gaia_mas.gaia.tools.sandbox import PythonSession
os.environ["OPENAI_API_KEY"] = "sk-bench-canary"
with PythonSession(timeout=30) as s:
    out = s.run("import glob\\nn = 0\\nfor p in glob.glob('/proc/[0-9]*/environ'):\\n"
                "    try: n += 'sk-bench-canary' in open(p).read()\\n    except OSError: pass\\nprint(n)")
    report(f"{out} processes hold the key ({s.mode})", s.proc.pid)
""",
"5 forks x 600 MB, budget 1024 MB": """
from gaia_mas.gaia.tools.sandbox import PythonSession
code = ("import os, time\\nfor i in range(5):\\n    if os.fork() == 0:\\n        b = bytearray(600 * 2**20)\\n"
        "        for j in range(0, len(b), 4096): b[j] = 1\\n        time.sleep(8); os._exit(0)\\n"
        "for i in range(5): os.wait()\\nprint('all children held 600 MB')")
with PythonSession(timeout=60, memory_mb=1024) as s:
    s.run("1"); watch(s.proc.pid)
    report(s.run(code)[:70], None)
""",
"6 x 200 MB files in one call": """
from gaia_mas.gaia.tools.sandbox import PythonSession
code = ("n = 0\\ntry:\\n    for i in range(6):\\n        with open(f'blob{i}', 'wb') as f:\\n"
        "            for _ in range(200): f.write(b'x' * 2**20)\\n        n += 1\\nexcept OSError as e: print(e.strerror)\\n"
        "print(n, 'x 200 MB written')")
with PythonSession(timeout=60) as s:
    out = s.run(code).replace("\\n", "; ")
    disk = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(tempfile.gettempdir()) for f in fs) >> 20
    report(f"{out}; {disk} MB on the host's disk", s.proc.pid)
""",
"attachment: link out of its folder": """
from gaia_mas.gaia.tools.file_tools import attachment_scope, read_attachment
d = tempfile.mkdtemp(); os.mkdir(f"{d}/task"); open(f"{d}/secret.txt", "w").write("outside-canary")
os.symlink(f"{d}/secret.txt", f"{d}/task/data.csv")
with attachment_scope({"file": f"{d}/task/data.csv"}): report(read_attachment.invoke({"file_path": f"{d}/task/data.csv"})[:70])
""",
"attachment: a FIFO": """
from gaia_mas.gaia.tools.file_tools import attachment_scope, read_attachment
d = tempfile.mkdtemp(); os.mkfifo(f"{d}/data.csv")
with attachment_scope({"file": f"{d}/data.csv"}): report(read_attachment.invoke({"file_path": "data.csv"})[:70])
""",
"attachment: 2 GB sparse file": """
from gaia_mas.gaia.tools.file_tools import attachment_scope, read_attachment
d = tempfile.mkdtemp()
with open(f"{d}/data.txt", "wb") as f: f.truncate(2 * 2**30)
with attachment_scope({"file": f"{d}/data.txt"}): report(read_attachment.invoke({"file_path": "data.txt"})[:70])
""",
}

PRELUDE = """
import json, os, resource, sys, tempfile, threading, time
from gaia_mas.gaia.tools.sandbox import process_tree_usage
peak, start = [0], time.perf_counter()
def watch(root):
    def loop():
        while True: peak[0] = max(peak[0], process_tree_usage(root)[1]); time.sleep(0.02)
    threading.Thread(target=loop, daemon=True).start()
def report(status, root=None):
    if root: peak[0] = max(peak[0], process_tree_usage(root)[1])
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
    print(json.dumps({"status": status, "seconds": round(time.perf_counter() - start, 2), "peak_mb": own + peak[0]}))
"""

def run(name:str, code:str, limit:float=60) -> dict:
    "One attack in a child process with its own temporary folder; a child still running after `limit` s is killed."
    with tempfile.TemporaryDirectory() as tmp:
        env = os.environ | {"TMPDIR": tmp, "OPIK_TRACK_DISABLE": "true"}
        try: p = subprocess.run([sys.executable, "-c", PRELUDE + code], capture_output=True, text=True, timeout=limit, env=env)
        except subprocess.TimeoutExpired: return {"status": f"still blocked after {limit:g} s", "seconds": limit, "peak_mb": None}
        left = os.listdir(tmp)
    if p.returncode: return {"status": f"failed: {p.stderr.strip().splitlines()[-1][:80]}", "seconds": None, "peak_mb": None}
    return json.loads(p.stdout.strip().splitlines()[-1]) | ({"left on disk": left} if left else {})

def main():
    print(f"{'attack':38} {'seconds':>8} {'peak MB':>8}  status")
    for name, code in ATTACKS.items():
        r = run(name, code)
        print(f"{name:38} {r['seconds'] if r['seconds'] is not None else '-':>8} {r['peak_mb'] or '-':>8}  {r['status']}")

if __name__ == "__main__": main()
