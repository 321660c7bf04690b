"""The clients people point at `gaia-mas serve`, each as its users call it: the Python `openai` SDK, LangChain's
`ChatOpenAI`, litellm, the Node `openai` package and the `llm` command-line tool. Each lists the models, retrieves one
(where the client can), gets an answer, streams one, and maps a wrong key, an unknown model and an oversized
conversation to its own usual exception.

One `gaia-mas serve --provider scripted` runs for the module, in a fresh HOME, with two documents uploaded over HTTP.
Each client's time to first token is written to tests/out/openai_clients.json."""
import json, os, shutil, subprocess, sys, time
from pathlib import Path
import httpx, openai, pytest

from rag_serve import serve  # tests/support is on sys.path (pytest.ini)

pytestmark = pytest.mark.process

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm reads its price list from the package, not the web

ROOT = Path(__file__).resolve().parents[3]
KEY = "clients-key"
Q = "What is a circuit breaker?"
PATTERNS = ["sequential", "parallel", "supervisor", "auto"]
ASK = [{"role": "user", "content": Q}]
# a long conversation: 25 earlier turns of 45,000 characters each, over the chat route's 1,000,000-byte cap
BIG = [m for i in range(25) for m in ({"role": "user", "content": f"turn {i} " + "x" * 45_000},
                                      {"role": "assistant", "content": "noted"})] + ASK
NODE_MODULES = ROOT/"tools/openai_node/node_modules"
TTFT: dict = {}  # client -> seconds to the first answer token, streamed


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    "A fresh user's `gaia-mas serve` with a key, and two of the sample documents uploaded."
    home = tmp_path_factory.mktemp("home")
    with serve(env={"HOME": str(home), "GAIA_MAS_API_KEY": KEY, "XDG_CACHE_HOME": str(home/".cache")}) as (url, _, _):
        docs = ROOT/"nbs/samples/kb/docs"
        files = [("files", (n, (docs/n).read_bytes(), "text/markdown")) for n in ("circuit-breakers.md", "bulkheads.md")]
        r = httpx.post(f"{url}/kb/documents", files=files, headers={"X-API-Key": KEY}, timeout=120)
        assert r.status_code in (200, 201), r.text
        yield url
    out = ROOT/"tests/out"; out.mkdir(parents=True, exist_ok=True)
    (out/"openai_clients.json").write_text(json.dumps({k: round(v, 3) for k, v in TTFT.items()}, indent=1))


def first_token(start, text_of) -> tuple[str, float]:
    "The text `start()` streams, and the seconds from the call to its first non-empty piece."
    t0, first, parts = time.monotonic(), None, []
    for chunk in start():
        if (piece := text_of(chunk)) and first is None: first = time.monotonic() - t0
        parts.append(piece or "")
    return "".join(parts), first


def delta(chunk) -> str: return chunk.choices[0].delta.content if chunk.choices else ""


def test_openai_sdk(server):
    c = openai.OpenAI(base_url=f"{server}/v1", api_key=KEY, max_retries=0, timeout=60)
    assert [m.id for m in c.models.list()] == PATTERNS
    assert c.models.retrieve("sequential").id == "sequential"
    assert "circuit breaker" in c.chat.completions.create(model="sequential", messages=ASK).choices[0].message.content.lower()
    text, TTFT["openai (Python)"] = first_token(
        lambda: c.chat.completions.create(model="sequential", messages=ASK, stream=True), delta)
    assert "circuit breaker" in text.lower()
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=f"{server}/v1", api_key="wrong", max_retries=0).models.list()
    with pytest.raises(openai.NotFoundError): c.models.retrieve("gpt-4o")
    with pytest.raises(openai.NotFoundError): c.chat.completions.create(model="gpt-4o", messages=ASK)
    with pytest.raises(openai.APIStatusError) as e: c.chat.completions.create(model="sequential", messages=BIG)
    assert e.value.status_code == 413 and "session_id" in e.value.message


def test_langchain_chat_openai(server):
    from langchain_openai import ChatOpenAI
    llm = ChatOpenAI(model="sequential", base_url=f"{server}/v1", api_key=KEY, max_retries=0, timeout=60)
    assert [m.id for m in llm.root_client.models.list()] == PATTERNS  # the SDK client LangChain holds
    assert llm.root_client.models.retrieve("parallel").id == "parallel"
    assert "circuit breaker" in llm.invoke(Q).content.lower()
    text, TTFT["LangChain ChatOpenAI"] = first_token(lambda: llm.stream(Q), lambda c: c.content)
    assert "circuit breaker" in text.lower()
    with pytest.raises(openai.AuthenticationError):
        ChatOpenAI(model="sequential", base_url=f"{server}/v1", api_key="wrong", max_retries=0).invoke(Q)
    with pytest.raises(openai.NotFoundError):
        ChatOpenAI(model="gpt-4o", base_url=f"{server}/v1", api_key=KEY, max_retries=0).invoke(Q)
    with pytest.raises(openai.APIStatusError) as e: llm.invoke([(m["role"], m["content"]) for m in BIG])
    assert e.value.status_code == 413


def test_litellm(server):
    "litellm as its users call it, `openai/PATTERN` at the service's base URL (it has no call that retrieves one model)."
    litellm = pytest.importorskip("litellm")
    kw = {"api_base": f"{server}/v1", "api_key": KEY, "num_retries": 0}
    models = litellm.get_valid_models(check_provider_endpoint=True, custom_llm_provider="openai", api_base=kw["api_base"],
                                      api_key=KEY)
    assert [m.split("/")[-1] for m in models] == PATTERNS
    r = litellm.completion(model="openai/sequential", messages=ASK, **kw)
    assert "circuit breaker" in r.choices[0].message.content.lower()
    text, TTFT["litellm"] = first_token(
        lambda: litellm.completion(model="openai/sequential", messages=ASK, stream=True, **kw), delta)
    assert "circuit breaker" in text.lower()
    with pytest.raises(litellm.AuthenticationError):
        litellm.completion(model="openai/sequential", messages=ASK, **{**kw, "api_key": "wrong"})
    with pytest.raises(litellm.NotFoundError): litellm.completion(model="openai/gpt-4o", messages=ASK, **kw)
    with pytest.raises(litellm.BadRequestError) as e: litellm.completion(model="openai/sequential", messages=BIG, **kw)
    assert e.value.status_code == 413


NODE_SCRIPT = r"""
const OpenAI = require("openai");
const [url, key, big] = process.argv.slice(2);
const opts = k => ({baseURL: url + "/v1", apiKey: k, maxRetries: 0, timeout: 60000});
const c = new OpenAI(opts(key)), ask = [{role: "user", content: "What is a circuit breaker?"}];
const failure = async f => {
  try { await f(); return null; } catch (e) { return {name: e.constructor.name, status: e.status}; }
};
(async () => {
  const out = {models: []};
  for await (const m of c.models.list()) out.models.push(m.id);
  out.retrieved = (await c.models.retrieve("supervisor")).id;
  out.answer = (await c.chat.completions.create({model: "sequential", messages: ask})).choices[0].message.content;
  const t0 = performance.now(); let text = "";
  for await (const ch of await c.chat.completions.create({model: "sequential", messages: ask, stream: true})) {
    const piece = ch.choices.length ? ch.choices[0].delta.content : "";
    if (piece && out.ttft === undefined) out.ttft = (performance.now() - t0) / 1000;
    text += piece || "";
  }
  out.streamed = text;
  out.wrong_key = await failure(() => new OpenAI(opts("wrong")).models.list());
  out.unknown_model = await failure(() => c.chat.completions.create({model: "gpt-4o", messages: ask}));
  const messages = JSON.parse(require("fs").readFileSync(big, "utf8"));
  out.oversized = await failure(() => c.chat.completions.create({model: "sequential", messages}));
  console.log(JSON.stringify(out));
})().catch(e => { console.error(e); process.exit(1); });
"""


@pytest.mark.skipif(shutil.which("node") is None or not NODE_MODULES.exists(),
                    reason="the Node openai package is not installed: run `make install` (it needs node and npm)")
def test_node_openai(server, tmp_path):
    (tmp_path/"clients.js").write_text(NODE_SCRIPT); (tmp_path/"big.json").write_text(json.dumps(BIG))
    p = subprocess.run(["node", str(tmp_path/"clients.js"), server, KEY, str(tmp_path/"big.json")], capture_output=True,
                       text=True, timeout=180, env={**os.environ, "NODE_PATH": str(NODE_MODULES)})
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["models"] == PATTERNS and out["retrieved"] == "supervisor"
    assert "circuit breaker" in out["answer"].lower() and "circuit breaker" in out["streamed"].lower()
    TTFT["openai (Node)"] = out["ttft"]
    assert out["wrong_key"] == {"name": "AuthenticationError", "status": 401}
    assert out["unknown_model"] == {"name": "NotFoundError", "status": 404}
    assert out["oversized"] == {"name": "APIError", "status": 413}  # the Node SDK has no class of its own for 413


def test_llm_command_line_tool(server, tmp_path, monkeypatch):
    """`llm` with the patterns declared in extra-openai-models.yaml, in a user folder of its own. Its commands run in
    this process through click's test runner (one start-up instead of one per command), except the streamed answer,
    which runs as its own process: its time to first token includes the command's start-up. `llm` has no call that
    retrieves one model from the server."""
    cli = pytest.importorskip("llm.cli", reason="llm is not installed (a dev requirement)").cli
    from click.testing import CliRunner
    models = "".join(f"- model_id: rag-{m}\n  model_name: {m}\n  api_base: {server}/v1\n  api_key_name: rag\n"
                     for m in [*PATTERNS, "gpt-4o"])
    (tmp_path/"extra-openai-models.yaml").write_text(models)
    env = {"LLM_USER_PATH": str(tmp_path), "OPENAI_API_KEY": ""}
    for k, v in env.items(): monkeypatch.setenv(k, v)
    run = lambda *args, stdin=None: CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)
    listed = run("models", "list", "-q", "rag-").output
    assert all(f"rag-{m}" in listed for m in PATTERNS), listed
    answer = run("-m", "rag-sequential", "--key", KEY, "--no-stream", Q)
    assert answer.exit_code == 0 and "circuit breaker" in answer.output.lower(), answer.output
    llm = shutil.which("llm", path=str(Path(sys.executable).parent)) or shutil.which("llm")
    t0 = time.monotonic()
    proc = subprocess.Popen([llm, "-m", "rag-sequential", "--key", KEY, Q], env={**os.environ, **env},
                            stdout=subprocess.PIPE, text=True)
    first = proc.stdout.read(1); TTFT["llm (command line, with its start-up)"] = time.monotonic() - t0
    assert "circuit breaker" in (first + proc.stdout.read()).lower() and proc.wait(timeout=60) == 0
    for args, stdin, status in [(("-m", "rag-sequential", "--key", "wrong", Q), None, "401"),
                                (("-m", "rag-gpt-4o", "--key", KEY, Q), None, "404"),
                                (("-m", "rag-sequential", "--key", KEY), json.dumps(BIG), "413")]:
        failed = run(*args, stdin=stdin)  # llm reports a failed request as `Error: ...` and exit status 1
        assert failed.exit_code == 1 and f"Error: Error code: {status}" in failed.output, (status, failed.output)
