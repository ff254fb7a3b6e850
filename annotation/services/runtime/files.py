"""A file written whole or not at all, by any number of writers at once (no Django: pure packages of
every layer use it, as they use `lazy_import`)."""

import os
import secrets
from pathlib import Path


def write_atomically(path, data, *, durable=False):
    """Write `data` (bytes) to `path` through a temporary file of this writer's own, renamed into
    place: a reader never sees half a file, and two writers at once (two workers filling one cache,
    two requests drawing one plot) never write into one temporary file, which let the first rename
    publish a mix of both or leave the second nothing to rename. `durable`: on disk (fsync) before
    the rename, for what a crash must not lose (a model's checkpoint)."""
    path = Path(path)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(6)}.tmp")
    try:
        with open(temporary, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
