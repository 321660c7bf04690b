"The real-server tests' model: llama.cpp's OpenAI-compatible server with Gemma 3 270M, on a free loopback port."
import contextlib, subprocess, sys, threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 180  # seconds for the server to assemble the model (first run only) and load it


@contextlib.contextmanager
def local_model_server(ctx:int=4096):
    "Start `tools/local_llm/serve.py` with a context of `ctx` tokens; yield its base URL; stop it."
    proc = subprocess.Popen([sys.executable, str(ROOT/"tools/local_llm/serve.py"), "--port", "0", "--ctx", str(ctx),
                             "--exit-with-parent"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    first: list[str] = []
    reader = threading.Thread(target=lambda: first.append(proc.stdout.readline()), daemon=True)
    reader.start(); reader.join(START_TIMEOUT)
    try:
        line = first[0].strip() if first else ""
        assert line.startswith("serving http://127.0.0.1:"), f"the local model server did not start: {line!r} (exit {proc.poll()})"
        yield line.split()[1]
    finally:
        proc.terminate()
        try: proc.wait(15)
        except subprocess.TimeoutExpired: proc.kill(); proc.wait(5)
        proc.stdout.close()
