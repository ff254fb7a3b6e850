"""What an ADEM run does before and between its epochs, on the run's `phase`, and in words (F16).

A training run spends its first half-minute encoding: the encoder loads (torch, MiniLM) on a
worker's first run, then every context, reference and response the vector cache lacks is encoded.
Only then do epochs arrive. `encoding_progress` records the encoding part by part and batch by
batch, `training_progress` the fitting; `phase_line` is what the run page shows
instead of an empty learning curve. Writes are spaced PHASE_EVERY_S apart (each is a commit),
except a part's first and last.
"""

import math
import time

from django.utils import timezone

from scoring.models import TrainingRun
from scoring.services.metrics.progress import elapsed_words

PHASE_EVERY_S = 0.5
PARTS = ("contexts", "references", "responses")


def training_run_phase_set(*, run, phase):
    TrainingRun.objects.filter(pk=run.pk).update(phase={**phase, "at": timezone.now().isoformat()})


def encoding_progress(*, run, responses):
    """A `progress(part, done, total)` callback for the encoder loop (adem.pipeline.encode_examples)."""
    last = [-math.inf]

    def report(part, done, total):
        now = time.monotonic()
        if 0 < done < total and now - last[0] < PHASE_EVERY_S:
            return
        last[0] = now
        phase = {"step": "encoding", "part": part, "done": done, "total": total, "responses": responses}
        training_run_phase_set(run=run, phase=phase)

    return report


def encoding_started(*, run, responses):
    training_run_phase_set(
        run=run, phase={"step": "encoding", "part": "", "done": 0, "total": 0, "responses": responses}
    )


def training_progress(*, run, max_epochs, patience, folds=None):
    """Record that fitting starts; returns `epoch_done(epoch)` for the fit's progress callback."""
    phase = {"step": "training", "epoch": 0, "max_epochs": max_epochs, "patience": patience, "folds": folds or 0}
    training_run_phase_set(run=run, phase=phase)

    def epoch_done(epoch):
        training_run_phase_set(run=run, phase={**phase, "epoch": epoch})

    return epoch_done


def phase_fraction(run):
    """How far the encoding is (0..1, the three parts in turn), or None outside it."""
    phase = run.phase or {}
    if run.status != TrainingRun.Status.RUNNING or phase.get("step") != "encoding" or phase.get("part") not in PARTS:
        return None
    share = phase["done"] / phase["total"] if phase.get("total") else 0.0
    return (PARTS.index(phase["part"]) + min(share, 1.0)) / len(PARTS)


def phase_line(run, *, now=None):
    """The run's phase in words while it is open, with the time since it was queued; "" once it has ended."""
    if run.status not in (TrainingRun.Status.QUEUED, TrainingRun.Status.RUNNING):
        return ""
    seconds = max(0, int(((now or timezone.now()) - run.created_at).total_seconds()))
    return f"{_what(run)} {elapsed_words(seconds)} so far."


def _what(run):
    if run.status == TrainingRun.Status.QUEUED:
        return "Queued, waiting for a worker:"
    phase = run.phase or {}
    if phase.get("step") == "encoding":
        responses = phase.get("responses", 0)
        head = f"Encoding {responses} rated response{'s' if responses != 1 else ''} with their contexts and references"
        if not phase.get("part"):
            return (
                f"{head}: loading the encoder (a worker's first run after it starts loads it, "
                "a few seconds; the vector cache then spares texts encoded before);"
            )
        parts = " → ".join(
            part if part != phase["part"] else f"{part} {phase['done']}/{phase['total']}" for part in PARTS
        )
        return f"{head} (only texts the vector cache lacks): {parts};"
    if phase.get("step") == "training":
        folds = f" ({phase['folds']} cross-validation folds, then the final fit)" if phase.get("folds") else ""
        epoch = phase.get("epoch", 0)
        where = f"epoch {epoch}" if epoch else "starting"
        if phase.get("stage") == "fold":  # a learned evaluator (scoring.services.learned) names its fit
            where = f"fold {phase['fold'] + 1} of {phase['folds']}, {where}"
        elif phase.get("stage") == "final":
            where = f"the final fit, {where}"
        if phase.get("val_pearson") is not None and epoch:
            where += f" (validation r {phase['val_pearson']:.3f})"
        return (
            f"Training{folds}: {where}, at most {phase.get('max_epochs')} epochs (it stops once "
            f"{phase.get('patience')} epochs in a row bring no better validation correlation);"
        )
    if phase.get("step") == "fitting":
        return "Fitting the experiment's models on the encoded vectors (its table appears when they are done);"
    if run.kind == TrainingRun.Kind.PRETRAIN:  # VHRED pre-training records its steps as epochs, no phase
        return "Pre-training VHRED (its steps appear below as they come):"
    return "Started: preparing the training examples;"
