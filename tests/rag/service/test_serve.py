"""`gaia-mas serve` beyond loopback, in process (no test listens beyond 127.0.0.1): with no API key it refuses to start
unless `--allow-keyless` says so, and wherever it listens its `Host` guard turns away a DNS-rebound page (another
site's name) and its origin guard a write from another site; the chat page keeps the key for the tab only."""
import asyncio
from unittest import mock
import httpx, pytest

from gaia_mas.rag.cli import rag_main
from gaia_mas.rag.service.app import create_app
from gaia_mas.rag.service.chat_page import CHAT_HTML
from gaia_mas.rag.service.guards import host_allowlist
from gaia_mas.rag.workflows.system import scripted_system

pytestmark = pytest.mark.security


def _serve(*args:str, env:dict) -> tuple[int, bool]:
    "The exit code of `gaia-mas serve ARGS`, and whether it went on to listen (uvicorn is replaced)."
    with mock.patch("uvicorn.run") as run, mock.patch.dict("os.environ", env), \
         mock.patch("gaia_mas.rag.service.serve._empty_kb", return_value=None):
        code = rag_main(["serve", "--provider", "scripted", "--workers", "1", *args])
    return code, run.called


def test_a_keyless_server_beyond_loopback_needs_consent(tmp_path, capsys):
    env = {"GAIA_MAS_API_KEY": "", "GAIA_MAS_CACHE": str(tmp_path), "GAIA_MAS_KB": f"sqlite:///{tmp_path}/kb.sqlite"}
    code, listened = _serve("--host", "0.0.0.0", env=env)
    err = capsys.readouterr().err
    assert (code, listened) == (2, False), f"a keyless server started on 0.0.0.0: {err}"
    assert "--allow-keyless" in err and "GAIA_MAS_API_KEY" in err and len(err.strip().splitlines()) == 1, err
    assert _serve("--host", "0.0.0.0", "--allow-keyless", env=env) == (0, True)
    assert _serve("--host", "0.0.0.0", env={**env, "GAIA_MAS_API_KEY": "k-1"}) == (0, True)
    (tmp_path/"key.txt").write_text("k-2\n")
    assert _serve("--host", "0.0.0.0", "--api-key-file", str(tmp_path/"key.txt"), env=env) == (0, True)
    assert _serve("--host", "0.0.0.0", "--api-key-file", str(tmp_path/"no-key.txt"), env=env) == (2, False)
    assert "cannot read --api-key-file" in capsys.readouterr().err
    assert _serve("--host", "127.0.0.1", env=env) == (0, True)


def test_a_server_on_every_interface_turns_away_a_rebound_page():
    "Bound to 0.0.0.0 with no key and no --allowed-host: another site's Host is refused, this machine's names answer."
    app = create_app(scripted_system(), allowed_hosts=host_allowlist("0.0.0.0"))
    async def go():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), timeout=60) as c:
            rebound = await c.get("http://evil.example:8000/kb/documents")
            written = await c.post("http://evil.example:8000/kb/documents", files={"files": ("a.md", b"# A\n")})
            local = await c.get("http://127.0.0.1:8000/health")
            other_site = await c.post("http://127.0.0.1:8000/multiagent/sequential/chat", json={"question": "hi"},
                                      headers={"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
            return rebound, written, local, other_site
    rebound, written, local, other_site = asyncio.run(go())
    assert (rebound.status_code, written.status_code) == (403, 403), rebound.text[:300]
    assert local.status_code == 200 and other_site.status_code == 403, other_site.text


def test_the_chat_page_keeps_the_key_for_the_tab_only():
    assert "sessionStorage.setItem(\"gaia_mas_key\"" in CHAT_HTML
    assert "localStorage.setItem" not in CHAT_HTML and "localStorage.getItem" not in CHAT_HTML
