"""On PYTHONPATH, a Python whose `sqlite3` cannot load extensions (pyenv's and python.org's default builds): the
knowledge base then needs pysqlite3, a second SQLite library in the process, as it does on those Pythons."""
import sqlite3, sys, types

_module = types.ModuleType("sqlite3"); _module.__dict__.update(sqlite3.__dict__)
_module.Connection = type("Connection", (), {"__doc__": "sqlite3.Connection without enable_load_extension"})
sys.modules["sqlite3"] = _module
