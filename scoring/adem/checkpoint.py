"""Checkpoint files: magic line, JSON header (format version, kind, config, sha256), tensor payload.

The header is checked and the payload's length and sha256 verified before anything is
deserialised, and the payload is read with `torch.load(weights_only=True)` (tensors only,
no pickled code). A corrupt, truncated, foreign or newer file is refused with a
`CheckpointError` naming the problem; a model is never built from half a checkpoint.
Writes go to a temporary file renamed into place, so a crash leaves the old file intact.
"""

import hashlib
import io
import json
from pathlib import Path

import numpy as np

from annotation.services.runtime.files import write_atomically
from annotation.services.runtime.lazy_import import lazy_module

# Loaded on first use, not at import: Django loads this module at start-up (docs/metrics.md, "Start-up").
torch = lazy_module("torch")

MAGIC = b"RATELAB-CHECKPOINT\n"
FORMAT_VERSION = 1


class CheckpointError(Exception):
    """The file is not a checkpoint this code can load."""


def save(path, *, kind, config, tensors):
    """Write `tensors` (name → numpy array, tensor, or a state dict of tensors) with `config` (JSON-able)."""
    buffer = io.BytesIO()
    torch.save(
        {k: torch.from_numpy(np.ascontiguousarray(v)) if isinstance(v, np.ndarray) else v for k, v in tensors.items()},
        buffer,
    )
    payload = buffer.getvalue()
    header = {
        "format_version": FORMAT_VERSION,
        "kind": kind,
        "config": config,
        "payload_bytes": len(payload),
        "sha256": hashlib.sha256(payload).hexdigest(),
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Two workers may save one path at once (the shared next-utterance heads on a fresh machine).
    write_atomically(path, MAGIC + json.dumps(header, sort_keys=True).encode() + b"\n" + payload, durable=True)
    return header["sha256"]


def read_header(path):
    """The checked header of a checkpoint file (raises CheckpointError)."""
    header, _ = _read(path, want_payload=False)
    return header


def load(path, *, kind):
    """(config, {name: tensor}) of a checkpoint of the given kind; CheckpointError otherwise."""
    header, payload = _read(path, want_payload=True)
    if header.get("kind") != kind:
        raise CheckpointError(f"{path} is a {header.get('kind')!r} checkpoint, not a {kind!r} checkpoint")
    try:
        tensors = torch.load(io.BytesIO(payload), weights_only=True, map_location="cpu")
    except Exception as error:  # the checksum matched, so this is a foreign or tampered file
        raise CheckpointError(f"{path}: payload could not be read ({error})") from error
    if not isinstance(tensors, dict):
        raise CheckpointError(f"{path}: payload is not a tensor dictionary")
    return header["config"], tensors


def _read(path, *, want_payload):
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path} does not exist")
    with open(path, "rb") as handle:
        if handle.read(len(MAGIC)) != MAGIC:
            raise CheckpointError(f"{path} is not a RateLab checkpoint (bad magic bytes)")
        line = handle.readline(1_000_000)
        try:
            header = json.loads(line)
        except ValueError as error:
            raise CheckpointError(f"{path}: header is corrupt ({error})") from error
        if not isinstance(header, dict) or "format_version" not in header:
            raise CheckpointError(f"{path}: header is missing the format version")
        if header["format_version"] != FORMAT_VERSION:
            raise CheckpointError(
                f"{path} has checkpoint format version {header['format_version']}; "
                f"this code reads version {FORMAT_VERSION}. Retrain or convert the model."
            )
        if not want_payload:
            return header, None
        payload = handle.read()
    if len(payload) != header.get("payload_bytes"):
        raise CheckpointError(
            f"{path} is truncated or padded: {len(payload)} payload bytes, header says {header.get('payload_bytes')}"
        )
    if hashlib.sha256(payload).hexdigest() != header.get("sha256"):
        raise CheckpointError(f"{path} is corrupt: sha256 of the payload does not match its header")
    return header, payload
