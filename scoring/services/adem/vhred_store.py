"""VHRED encoder checkpoints, stored by content: `<data>/adem/vhred/<sha256>.ckpt`.

A pre-training run writes to a work file of its own and, when it ends, renames it to the sha256 of
its payload: no run ever replaces another's checkpoint, and an ADEM model records the hash of the
checkpoint it was trained with (`AdemModel.vhred_sha256`) and always scores with that one. A
checkpoint stays while a model uses it or while it is someone's latest pre-training (what their
next training reads); `checkpoints_collect` removes the others.

Models trained before this scheme have a blank hash and read the legacy `vhred.ckpt`, which
nothing writes any more.
"""

import re
import secrets
import shutil
from pathlib import Path

from django.conf import settings
from django.db.models import Q

from scoring.adem.checkpoint import CheckpointError, read_header
from scoring.models import AdemModel, TrainingRun
from scoring.services.adem.refusals import AdemRefusal

HASH_FILE = re.compile(r"^[0-9a-f]{64}\.ckpt$")


def vhred_dir():
    return Path(settings.RATELAB_DATA_DIR) / "adem" / "vhred"


def legacy_path():
    """The single checkpoint of earlier versions, read only by the models trained on it."""
    return vhred_dir() / "vhred.ckpt"


def checkpoint_path(sha256):
    return vhred_dir() / f"{sha256}.ckpt"


def work_path():
    """A fresh file for one pre-training run to write (and resave) until it ends."""
    return vhred_dir() / "work" / f"{secrets.token_hex(8)}.ckpt"


def checkpoint_store(work):
    """Move a finished work file to its content address; returns the sha256 (the payload's)."""
    sha = read_header(work)["sha256"]
    target = checkpoint_path(sha)
    if target.is_file():
        Path(work).unlink()  # the same content is already stored: keep that file untouched
    else:
        Path(work).replace(target)
    return sha


def _adopt_legacy():
    """The legacy checkpoint copied to its content address (the legacy file stays for old models)."""
    legacy = legacy_path()
    try:
        sha = read_header(legacy)["sha256"]
    except CheckpointError:
        return None
    if not checkpoint_path(sha).is_file():
        tmp = vhred_dir() / "work" / f"adopt-{secrets.token_hex(4)}.ckpt"
        tmp.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(legacy, tmp)
        tmp.replace(checkpoint_path(sha))
    return sha


def _latest_pretrainings():
    runs = TrainingRun.objects.filter(kind=TrainingRun.Kind.PRETRAIN, status=TrainingRun.Status.DONE)
    return runs.exclude(Q(result__checkpoint_sha256=None) | Q(result__checkpoint_sha256="")).order_by("-pk")


def current_sha(*, owner):
    """The checkpoint a new ADEM training (or a resumed pre-training) of `owner` starts from.

    The owner's own latest pre-training; else the latest one made without an owner (the command's)
    or by anyone (reading a checkpoint changes nothing of its maker's); else the legacy file. None if
    there is no checkpoint at all.
    """
    runs = _latest_pretrainings()
    owner_id = getattr(owner, "pk", owner)
    for queryset in (runs.filter(owner_id=owner_id) if owner_id else runs.none(), runs.filter(owner=None), runs):
        for sha in queryset.values_list("result__checkpoint_sha256", flat=True)[:20]:
            if checkpoint_path(sha).is_file():
                return sha
    return _adopt_legacy()


def current_path(*, owner):
    sha = current_sha(owner=owner)
    if sha is None:
        raise AdemRefusal(f"no pre-trained VHRED encoder under {vhred_dir()}: run `manage.py pretrain_vhred` first")
    return sha, checkpoint_path(sha)


def model_checkpoint(model):
    """The VHRED checkpoint an ADEM model was trained with (never another one)."""
    path = checkpoint_path(model.vhred_sha256) if model.vhred_sha256 else legacy_path()
    if not path.is_file():
        raise AdemRefusal(
            f"the VHRED encoder checkpoint of ADEM model {model.name!r} is missing ({path.name}); retrain the model"
        )
    return path


def checkpoints_in_use():
    """Hashes to keep: every model's, and each owner's latest pre-training."""
    used = set(AdemModel.objects.exclude(vhred_sha256="").values_list("vhred_sha256", flat=True))
    seen_owners = set()
    for owner_id, sha in _latest_pretrainings().values_list("owner_id", "result__checkpoint_sha256"):
        if owner_id not in seen_owners:
            seen_owners.add(owner_id)
            used.add(sha)
    return used


def checkpoints_collect():
    """Delete content-addressed checkpoints nothing uses; returns the removed file names."""
    folder = vhred_dir()
    if not folder.is_dir():
        return []
    used = checkpoints_in_use()
    removed = []
    for path in sorted(folder.iterdir()):
        if HASH_FILE.match(path.name) and path.stem not in used:
            path.unlink(missing_ok=True)
            removed.append(path.name)
    return removed
