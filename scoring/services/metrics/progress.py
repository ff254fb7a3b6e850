"""Live progress of a metric run inside its chunks, and the line the page and its JSON show.

A run's `done_chunks` moves once per chunk: a small dataset is one chunk, so the bar would stand
at 0% until the end. The engine reports each metric family before it scores it, and what it is
about to load first (`scoring.metrics.registry.Progress`); `chunk_progress` records that on the
run's `phase`, and `phase_line` turns the row into the words the page shows ("Loading the
MiniLM model… about 4 s", "Scoring METEOR 1.5 (Java): 25 of 28 metrics done", elapsed time).

Writes are spaced at least PHASE_EVERY_S apart per run and process (each is a commit: a run of
many fast chunks must not pay one per family), except that a load is always written: it is what
makes a first run slow, and the page says so while it happens.
"""

import math
import time

from django.utils import timezone

from scoring.models import MetricRun

PHASE_EVERY_S = 0.5
_last_write = {}  # (run id, created_at) -> monotonic time of this process's last phase write


def chunk_progress(*, run, chunk, write=None):
    """A `progress` callback for `engine.score` that records the chunk's place on the run's row.

    `write(phase, urgent=...)` stores it (default: `metric_run_phase_set`) and may decline one that
    is not urgent, returning False (metric_chunks does while another thread writes SQLite)."""
    key = (run.pk, run.created_at)
    if write is None:

        def write(phase, *, urgent):
            metric_run_phase_set(run=run, phase=phase)
            return True

    def report(step):
        if step.done >= step.total:  # the chunk's own "done" follows at once (metric_chunk_compute)
            return
        now = time.monotonic()
        if not step.loading and now - _last_write.get(key, -math.inf) < PHASE_EVERY_S:
            return
        if len(_last_write) > 256:
            _last_write.clear()
        if write(phase_of(step, chunk=chunk.index), urgent=bool(step.loading)) is not False:
            _last_write[key] = now

    return report


def phase_of(step, *, chunk):
    """The JSON a run's `phase` holds for an engine `Progress`."""
    return {
        "chunk": chunk,
        "family": step.family,
        "done": step.done,
        "total": step.total,
        "loading": [{"label": r.label, "typical_s": r.typical_s} for r in step.loading],
        "at": timezone.now().isoformat(),
    }


def metric_run_phase_set(*, run, phase):
    MetricRun.objects.filter(pk=run.pk).update(phase=phase, heartbeat_at=timezone.now())


def elapsed_seconds(run, *, now=None):
    end = run.finished_at or now or timezone.now()
    return max(0, int((end - run.created_at).total_seconds()))


def elapsed_words(seconds):
    if seconds < 60:
        return f"{seconds} s"
    return f"{seconds // 60} min {seconds % 60:02d} s"


def phase_line(run, *, now=None):
    """What the run is doing, in words, with the time since it was queued; "" once it has ended."""
    if run.status not in (MetricRun.Status.QUEUED, MetricRun.Status.RUNNING):
        return ""
    elapsed = elapsed_words(elapsed_seconds(run, now=now))
    if run.status == MetricRun.Status.QUEUED:
        return f"Queued, waiting for a worker: {elapsed} so far."
    phase = run.phase or {}
    chunks = f" (chunk {phase.get('chunk', 0) + 1} of {run.total_chunks})" if run.total_chunks > 1 else ""
    if phase.get("loading"):
        loading = " and ".join(item["label"] for item in phase["loading"])
        about = round(sum(item["typical_s"] for item in phase["loading"]))
        then = f" for {phase['family']}" if phase.get("family") else ""
        them = "them" if len(phase["loading"]) > 1 else "it"
        return (
            f"Loading {loading}{then}{chunks}: a worker process loads {them} once, on its first run after it "
            f"starts (about {about} s on an idle 2-core machine), and keeps {them}. {phase['done']} of "
            f"{phase['total']} metrics done; {elapsed} so far."
        )
    if phase.get("family"):
        return f"Scoring {phase['family']}{chunks}: {phase['done']} of {phase['total']} metrics done; {elapsed} so far."
    return f"Started: {run.done_chunks} of {run.total_chunks} chunks done; {elapsed} so far."
