from django.db import models
from django.db.models import F, Q

from annotation.models.datasets import Context, Response
from annotation.models.ratings import Annotator, Assignment
from annotation.models.surveys import Survey


class PairwiseJudgement(models.Model):
    """One annotator's choice between two responses to one context, on one aspect.

    Collected judgements store the response shown on the left as `response_a` (so `winner == "a"`
    means "chose the left one" and `position_known` is true); imported ones keep the file's order
    and have no known position. Imported judgements have no assignment.
    """

    class Winner(models.TextChoices):
        A = "a", "A"
        B = "b", "B"
        TIE = "tie", "Tie"

    class Strength(models.TextChoices):
        NONE = "", "Not asked"
        SLIGHT = "slight", "Slightly better"
        CLEAR = "clear", "Clearly better"

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="pairwise_judgements")
    annotator = models.ForeignKey(Annotator, on_delete=models.PROTECT, related_name="pairwise_judgements")
    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="+")
    response_a = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="+")
    response_b = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="+")
    aspect = models.SlugField(max_length=50, default="overall")
    winner = models.CharField(max_length=3, choices=Winner.choices)
    strength = models.CharField(max_length=6, choices=Strength.choices, blank=True, default="")
    reason = models.CharField(max_length=200, blank=True)
    position_known = models.BooleanField(default=True)
    seconds = models.FloatField(null=True, blank=True)
    assignment = models.ForeignKey(
        Assignment, null=True, blank=True, on_delete=models.CASCADE, related_name="pairwise_judgements"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["survey", "context", "annotator"]
        constraints = [
            models.UniqueConstraint(
                fields=["survey", "annotator", "response_a", "response_b", "aspect"], name="pairwise_once_per_pair"
            ),
            models.CheckConstraint(condition=~Q(response_a=F("response_b")), name="pairwise_two_responses"),
        ]
        indexes = [models.Index(fields=["survey", "aspect"])]

    def __str__(self):
        return f"{self.annotator}: {self.winner} ({self.aspect})"
