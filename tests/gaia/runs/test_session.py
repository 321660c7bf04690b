"""`budget="auto"` judges by the model, not by the address: a loopback server that reports a large model gets the
hosted budget, and its researcher uses the server's own tool calling; the real Gemma 3 270M server keeps the local
budget, with its guided steps (one tool call held to a JSON schema). The line that says which budget and why is the
one `gaia-mas ask` and `run` print."""
import contextlib, io
import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from gaia_mas.cli import parser
from gaia_mas.core.options import ModelOptions
from gaia_mas.core.testing import FakeOpenAIServer
from gaia_mas.gaia.agents.graph import make_llms
from gaia_mas.gaia.cli import plan_of
from gaia_mas.gaia.runs.session import configs_of, plan

LARGE = [{"id": "llama-3.3-70b-instruct", "meta": {"n_params": 70_553_706_496, "n_ctx_train": 131072}}]
SMALL = [{"id": "/models/gemma-3-270m-it-Q4_K_M.gguf", "meta": {"n_params": 268_098_176, "n_ctx_train": 32768}}]


@tool
def lookup(q:str) -> str:
    "Look `q` up."
    return "nothing"


def _budget_line(base_url:str) -> str:
    "What `gaia-mas ask --base-url URL` prints about its budget."
    err = io.StringIO()
    with contextlib.redirect_stderr(err): plan_of(parser().parse_args(["ask", "What is x?", "--base-url", base_url]))
    return err.getvalue()


def _researcher_request(models:list) -> tuple:
    "The plan for a loopback server listing `models`, and the first request its researcher sends."
    with FakeOpenAIServer(responder=lambda r: "{}", models=models) as srv:
        p = plan(ModelOptions(base_url=srv.base_url, max_retries=0))
        researcher = make_llms(configs_of(p), {"researcher": [lookup]}, agents=("researcher",), guided=p.budget.guided,
                               timeout=30, max_retries=0)["researcher"]
        with contextlib.suppress(Exception): researcher.invoke([HumanMessage("What is x?")])
        return p, srv.requests[0], _budget_line(srv.base_url)


def test_a_large_model_on_loopback_gets_the_hosted_budget_and_the_servers_tool_calling():
    p, request, line = _researcher_request(LARGE)
    print(f"\n{line}", end="")
    assert (p.budget.name, p.model.model, p.budget.guided) == ("hosted", "llama-3.3-70b-instruct", False)
    assert line.startswith("gaia-mas: budget hosted: llama-3.3-70b-instruct at http://127.0.0.1:"), line
    assert "has 70.6B parameters (server metadata)" in line
    assert [t["function"]["name"] for t in request["tools"]] == ["lookup"]   # the server's own tool calling
    assert "response_format" not in request


def test_a_small_model_on_loopback_keeps_the_local_budget_and_its_guided_steps():
    p, request, line = _researcher_request(SMALL)
    assert (p.budget.name, p.budget.guided, p.timeout) == ("local", True, 170)
    assert "has 268M parameters (server metadata); --budget hosted lifts it" in line, line
    assert "tools" not in request and request["response_format"]["type"] == "json_schema"


@pytest.mark.real_server
def test_gemma_3_270m_keeps_the_local_budget(local_model_url):
    "The real llama.cpp server with Gemma 3 270M: its size from the server, the local budget."
    line = _budget_line(local_model_url)
    print(f"\n{line}", end="")
    assert line.startswith("gaia-mas: budget local: ") and "parameters" in line and "lifts it" in line, line
    assert plan(ModelOptions(base_url=local_model_url)).budget.name == "local"
