"""VHRED pre-training as a service: read the corpus, train into a work file, store it by content.

Checkpoints are kept by scoring.services.adem.vhred_store; this module runs a pre-training and records it on a
TrainingRun (progress per 20 steps, the stored checkpoint's hash as its result).
"""

import secrets
import shutil
from pathlib import Path

from django.conf import settings

from scoring.adem import vhred
from scoring.adem.vhred.corpus import CorpusError, chitchat_dialogues, file_dialogues
from scoring.models import TrainingRun
from scoring.services.adem import vhred_store
from scoring.services.adem.refusals import AdemRefusal


def corpus_store(*, upload):
    """Save an uploaded corpus file under the data directory; returns its path (as a string)."""
    suffix = ".jsonl" if upload.name.endswith((".jsonl", ".json")) else ".txt"
    path = Path(settings.RATELAB_DATA_DIR) / "adem" / "corpora" / f"{secrets.token_hex(8)}{suffix}"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        for chunk in upload.chunks():
            handle.write(chunk)
    return str(path)


def vhred_pretrain(
    *, corpus=None, epochs=1, resume=False, max_steps=None, config=None, seed=0, owner=None, run=None, progress=None
):
    """Pre-train (or resume) the VHRED encoder ADEM's `vhred` option uses. Returns the stats dict.

    `corpus` is a dialogue file (see scoring.adem.vhred.corpus); default the packaged
    Chit-Chat dataset. `config` overrides VhredConfig fields (small models for tests).
    The run writes a work file of its own and stores it under its content hash at the end
    (scoring.services.adem.vhred_store): no checkpoint a model uses is ever replaced. `resume` continues the
    owner's latest checkpoint into a new one.
    """
    try:
        dialogues = file_dialogues(corpus) if corpus else chitchat_dialogues()
    except CorpusError as error:
        raise AdemRefusal(str(error)) from error
    owner = owner if owner is not None else (run.owner if run is not None else None)
    start = vhred_store.current_sha(owner=owner) if resume else None
    if resume and start is None:
        raise AdemRefusal(f"nothing to resume: no VHRED checkpoint under {vhred_store.vhred_dir()}")
    path = vhred_store.work_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    if start is not None:
        shutil.copyfile(vhred_store.checkpoint_path(start), path)
    if run is None:
        run = TrainingRun.objects.create(
            kind=TrainingRun.Kind.PRETRAIN,
            owner=owner,
            params={"corpus": str(corpus or "chitchat-dataset"), "epochs": epochs, "resume": resume},
        )
    run.status = TrainingRun.Status.RUNNING
    run.save(update_fields=["status", "updated_at"])

    def report(epoch, step, loss, kl_weight):
        run.progress = [*run.progress, {"epoch": epoch, "step": step, "train_loss": loss, "kl_weight": kl_weight}]
        run.save(update_fields=["progress", "updated_at"])
        if progress is not None:
            progress(epoch, step, loss, kl_weight)

    try:
        stats = vhred.pretrain.pretrain(
            dialogues,
            path,
            config=vhred.model.VhredConfig.from_dict(config) if config else None,
            epochs=epochs,
            resume=resume,
            max_steps=max_steps,
            seed=seed,
            progress=report,
        )
        sha = vhred_store.checkpoint_store(path)
    except Exception as error:
        path.unlink(missing_ok=True)
        run.status, run.error = TrainingRun.Status.FAILED, str(error)
        run.save(update_fields=["status", "error", "updated_at"])
        raise
    stats["checkpoint"] = str(vhred_store.checkpoint_path(sha))
    stats["checkpoint_sha256"] = sha
    stats["resumed_from"] = start
    stats["dialogues"] = len(dialogues)
    run.status, run.result = TrainingRun.Status.DONE, stats
    run.save(update_fields=["status", "result", "updated_at"])
    stats["collected"] = vhred_store.checkpoints_collect()
    return stats
