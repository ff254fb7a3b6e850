from django.db import models
from django.db.models import F, Q

from annotation.models.datasets import Context, Response
from annotation.models.ratings import Annotator, Assignment, HITItem
from annotation.models.surveys import Survey


class BWSJudgement(models.Model):
    """One annotator's best and worst pick among a tuple of responses to one context.

    `responses` keeps the tuple's response ids in the order the page showed them (position effects
    and the export need it); `best` and `worst` are two of them, never the same one.
    """

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="bws_judgements")
    annotator = models.ForeignKey(Annotator, on_delete=models.PROTECT, related_name="bws_judgements")
    assignment = models.ForeignKey(
        Assignment, null=True, blank=True, on_delete=models.CASCADE, related_name="bws_judgements"
    )
    item = models.ForeignKey(HITItem, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # Empty for a tuple across contexts (survey.bws_across_contexts): each reply has its own.
    context = models.ForeignKey(Context, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    responses = models.JSONField(help_text="The tuple's response ids, in the order shown.")
    best = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="+")
    worst = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="+")
    seconds = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["survey", "context", "annotator"]
        verbose_name = "best-worst judgement"
        constraints = [
            models.CheckConstraint(condition=~Q(best=F("worst")), name="bws_best_is_not_worst"),
            models.UniqueConstraint(
                fields=["annotator", "item"], condition=Q(item__isnull=False), name="bws_once_per_item"
            ),
        ]

    def __str__(self):
        return f"{self.annotator}: best {self.best_id}, worst {self.worst_id}"
