from django.conf import settings
from django.db import models

from annotation.models import Dataset


class MetricRun(models.Model):
    """One request to compute metrics for a dataset, split into chunks that workers score.

    Progress is `done_chunks / total_chunks`, plus the share of its metrics the latest chunk has
    scored (`phase`); the page and the command read it.
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="metric_runs")
    metrics = models.JSONField(help_text="Metric names computed by this run.")
    versions = models.JSONField(default=dict, help_text="{metric: version} at the time of the run.")
    signatures = models.JSONField(
        default=dict,
        blank=True,
        help_text="{metric: signature}: name, version, options, library versions and model file hashes "
        "that produced the run's scores (scoring.metrics.signature).",
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    total_chunks = models.PositiveIntegerField(default=0)
    done_chunks = models.PositiveIntegerField(default=0)
    total_responses = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Last sign of life of a worker on this run (a chunk started, scored or still working); "
        "the watchdog re-queues a run that has shown none for RUN_STALL_SECONDS.",
    )
    phase = models.JSONField(
        default=dict,
        blank=True,
        # names services/metrics/progress.py by its old module name, as migration 0014 does: new text = a migration
        help_text="Where a chunk is within its metrics: the family it scores, metrics done of the total, "
        "what it is loading first (scoring.services.metric_progress); the page shows it while the run is open.",
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"metrics for {self.dataset} ({self.done_chunks}/{self.total_chunks}, {self.status})"

    @property
    def progress(self):
        if not self.total_chunks or self.status == self.Status.DONE:
            return 1.0
        done = self.done_chunks
        phase = self.phase or {}
        # a small dataset is one chunk: move within it (a re-queued run's phase is a dead worker's)
        if self.status == self.Status.RUNNING and done < self.total_chunks and phase.get("total"):
            done += min(phase.get("done", 0) / phase["total"], 1.0)
        return min(done / self.total_chunks, 1.0)


class MetricChunk(models.Model):
    """A slice of a run's responses; one Celery task. A done chunk is never scored again."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DONE = "done"
        FAILED = "failed"

    run = models.ForeignKey(MetricRun, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    response_ids = models.JSONField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(
        default=0, help_text="Times a worker started this chunk (retries and redeliveries after a lost worker)."
    )
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="metricchunk_unique_index")]

    def __str__(self):
        return f"chunk {self.index} of run {self.run_id} ({self.status})"
