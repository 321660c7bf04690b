"Marks every test that uses the PostgreSQL server with `postgres`, so `pytest -m 'not postgres'` leaves them out."
import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if "pg_url" in getattr(item, "fixturenames", ()): item.add_marker(pytest.mark.postgres)
