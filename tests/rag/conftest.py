"""Fixtures of the RAG tests: a real PostgreSQL server for the session, and a fresh knowledge base URL per test,
parametrized so that every knowledge-base test runs against SQLite and against PostgreSQL."""
import itertools, os, shutil, sys
from pathlib import Path
import pytest

from gaia_mas.core.pg_server import fresh_database, pg_missing, postgres_server
from gaia_mas.rag.kb.ingest import sample_dir

_n = itertools.count()


@pytest.fixture(scope="session")
def pg_url():
    "URL of a PostgreSQL server with pgvector on 127.0.0.1, started once per test session."
    if why := pg_missing(): pytest.skip(why)
    with postgres_server() as url: yield url


# the PostgreSQL case carries its mark, so that `-m "not postgres"` leaves it out (it reaches the server through
# getfixturevalue, which the marking of tests that name `pg_url` cannot see)
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def kb_url(request, tmp_path):
    "A URL for an empty knowledge base, once per backend."
    if request.param == "sqlite": yield f"sqlite:///{tmp_path/'kb.sqlite'}"; return
    server = request.getfixturevalue("pg_url")
    with fresh_database(server, f"kb_test_{os.getpid()}_{next(_n)}") as url: yield url


@pytest.fixture
def no_openai(monkeypatch):
    "No OpenAI key and no embedding preference in the environment."
    for k in ("OPENAI_API_KEY", "GAIA_MAS_EMBEDDINGS", "GAIA_MAS_KB"): monkeypatch.delenv(k, raising=False)


@pytest.fixture
def docs(tmp_path):
    "A private copy of part of the sample collection: Markdown, HTML, PDF and Word, two with metadata beside them."
    d = tmp_path/"docs"; d.mkdir()
    for name in ["circuit-breakers.md", "load-balancing.md", "retry-storms.html", "timeout-budgets.pdf",
                 "timeout-budgets.pdf.meta.json", "outlier-detection.docx", "outlier-detection.docx.meta.json",
                 "rate-limiting.md", "idempotency.md"]:
        shutil.copy(sample_dir()/"docs"/name, d/name)
    return d
