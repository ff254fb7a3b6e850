"""On-disk cache of encoded vectors, keyed by (encoder id, text hash).

Retraining, k-fold runs and experiments re-encode nothing: a vector is computed once per
text and encoder. SQLite (one file under the data directory handed in) keeps it a single,
safely shared file; the encoder id changes whenever the encoder's weights change.
"""

import hashlib
import sqlite3
from pathlib import Path

import numpy as np

SEPARATOR = "\x1e"  # between context turns in the hashed key; never typed by people


def text_key(kind, item):
    """Stable key for a text (kind "text") or a list of context turns (kind "context")."""
    payload = SEPARATOR.join(item) if kind == "context" else item
    return hashlib.sha256(f"{kind}\x1f{payload}".encode()).hexdigest()


class VectorCache:
    def __init__(self, path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors (encoder TEXT, key TEXT, data BLOB, PRIMARY KEY (encoder, key))"
        )
        self._db.commit()

    def get_many(self, encoder_id, keys):
        found = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT key, data FROM vectors WHERE encoder = ? AND key IN ({marks})", [encoder_id, *chunk]
            )
            for key, data in rows:
                found[key] = np.frombuffer(data, dtype=np.float32)
        return found

    def put_many(self, encoder_id, items):
        self._db.executemany(
            "INSERT OR REPLACE INTO vectors (encoder, key, data) VALUES (?, ?, ?)",
            [(encoder_id, key, np.asarray(v, dtype=np.float32).tobytes()) for key, v in items],
        )
        self._db.commit()

    def count(self, encoder_id=None):
        if encoder_id is None:
            return self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
        return self._db.execute("SELECT COUNT(*) FROM vectors WHERE encoder = ?", [encoder_id]).fetchone()[0]

    def close(self):
        self._db.close()


def encode(encoder, items, *, kind, cache=None, progress=None):
    """Vectors for texts or contexts (one row each), from the cache where possible.

    `progress(done, total)` hears how many of the texts the cache lacked are encoded: after each
    batch with an encoder that reports them (`reports_progress`), else once at the end."""
    if not items:
        return np.zeros((0, encoder.dim), dtype=np.float32)
    keys = [text_key(kind, item) for item in items]
    found = cache.get_many(encoder.id, keys) if cache is not None else {}
    missing = {}
    for key, item in zip(keys, items, strict=True):
        if key not in found and key not in missing:
            missing[key] = item
    if missing:
        todo = list(missing.values())
        if progress is not None:
            progress(0, len(todo))
        if getattr(encoder, "reports_progress", False):
            step = {"progress": progress}
            vectors = encoder.encode_contexts(todo, **step) if kind == "context" else encoder.encode_texts(todo, **step)
        else:
            vectors = encoder.encode_contexts(todo) if kind == "context" else encoder.encode_texts(todo)
            if progress is not None:
                progress(len(todo), len(todo))
        new = list(zip(missing.keys(), vectors, strict=True))
        found.update(new)
        if cache is not None:
            cache.put_many(encoder.id, new)
    return np.stack([found[key] for key in keys]).astype(np.float32)
