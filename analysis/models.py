from django.db import models

from annotation.models import Dataset, Survey


class Report(models.Model):
    """A computed correlation report for one dataset (optionally one survey) and one filter set.

    `params` are the filters (aspect, systems, exclusion policy, learned metric); `params_hash`
    identifies them. `fingerprint` summarises the inputs the report was computed from (ratings,
    exclusion decisions, metric scores); a different current fingerprint means the report is
    stale and a Celery task recomputes it. `vectors` holds the per-response values the plots
    need; it is large, so pages load it only when drawing a plot.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Computing"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="reports")
    survey = models.ForeignKey(Survey, null=True, blank=True, on_delete=models.CASCADE, related_name="reports")
    params = models.JSONField(default=dict)
    params_hash = models.CharField(max_length=64)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    data = models.JSONField(null=True, blank=True)
    vectors = models.JSONField(null=True, blank=True)
    fingerprint = models.CharField(max_length=64, blank=True)
    error = models.TextField(blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    requested_at = models.DateTimeField(null=True, blank=True)
    checked_at = models.DateTimeField(null=True, blank=True, help_text="Last comparison of the inputs' fingerprint.")
    seconds = models.FloatField(null=True, blank=True, help_text="Time the last computation took.")
    attempts = models.PositiveIntegerField(
        default=0, help_text="Times a worker started the requested computation without finishing it yet."
    )
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="Last sign of life of the worker computing it (see RUN_STALL_SECONDS)."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["dataset", "survey", "params_hash"], name="report_unique_params"),
            models.UniqueConstraint(
                fields=["dataset", "params_hash"], condition=models.Q(survey__isnull=True), name="report_unique_dataset"
            ),
        ]

    def __str__(self):
        return f"report {self.dataset} {self.survey or ''} {self.params_hash[:8]}"
