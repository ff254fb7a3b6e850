from django.db import models

from annotation.models import Conversation, ConversationTurn, Response


class MetricScore(models.Model):
    """One metric's score for one response, tagged with the metric's version.

    A changed implementation bumps the version, so old scores are recomputed rather than
    mixed with new ones.
    """

    # No index of its own: the unique (response, metric) index leads with the response and serves
    # every lookup by response, and each extra index costs every one of the many score writes.
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="metric_scores", db_index=False)
    metric = models.CharField(max_length=100)
    version = models.CharField(max_length=40)
    value = models.FloatField(null=True, help_text="Null when the metric is undefined for the response.")
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["response", "metric"], name="metricscore_unique")]

    def __str__(self):
        return f"{self.metric}={self.value}"


class ConversationMetricScore(models.Model):
    """One conversation-level metric's score for one whole conversation (issue 37).

    The twin of MetricScore for conversations: a response's scores stay one row per (response,
    metric) there; a conversation's are here, one row per (conversation, metric), so neither table
    needs a nullable foreign key and a check that exactly one is set.
    """

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="metric_scores", db_index=False
    )
    metric = models.CharField(max_length=100)
    version = models.CharField(max_length=40)
    value = models.FloatField(null=True, help_text="Null when the metric is undefined for the conversation.")
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["conversation", "metric"], name="conversationmetricscore_unique")
        ]

    def __str__(self):
        return f"{self.metric}={self.value}"


class TurnMetricScore(models.Model):
    """One turn-level metric's score for one system turn of a conversation, its context being the
    conversation so far (issue 37; scoring.metrics.conversation.turn_metrics)."""

    turn = models.ForeignKey(ConversationTurn, on_delete=models.CASCADE, related_name="metric_scores", db_index=False)
    metric = models.CharField(max_length=100)
    version = models.CharField(max_length=40)
    value = models.FloatField(null=True, help_text="Null when the metric is undefined for the turn.")
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["turn", "metric"], name="turnmetricscore_unique")]

    def __str__(self):
        return f"{self.metric}={self.value}"
