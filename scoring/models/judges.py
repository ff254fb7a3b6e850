"""LLM judges: their settings, the cache of what they answered, and each run's usage and cost.

A judge names the environment variable that holds its API key, never the key: the key is read
from the environment when a chunk is judged and goes nowhere else.
"""

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

from scoring.judges.prompts import TEMPLATES
from scoring.models.adem import model_name_validator
from scoring.models.runs import MetricRun

env_name_validator = RegexValidator(
    r"^[A-Za-z_][A-Za-z0-9_]{0,99}$",
    "An environment variable name: letters, digits and '_', not starting with a digit.",
)


class Judge(models.Model):
    """An OpenAI-compatible model asked to rate responses; its scores are the metric judge:<name>."""

    TEMPLATE_CHOICES = [(name, name) for name in TEMPLATES]

    # Unique per owner: a judge is its researcher's alone (refusals must not reveal others' names).
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="judges")
    name = models.CharField(max_length=100, validators=[model_name_validator])
    base_url = models.URLField(max_length=500, help_text="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    model = models.CharField(max_length=200)
    api_key_env = models.CharField(
        max_length=100,
        blank=True,
        validators=[env_name_validator],
        help_text="Name of the environment variable holding the API key (empty: the server needs none).",
    )
    template = models.CharField(max_length=40, choices=TEMPLATE_CHOICES, default="rating")
    temperature = models.FloatField(default=0.0, validators=[MinValueValidator(0.0), MaxValueValidator(2.0)])
    samples = models.PositiveIntegerField(default=1, validators=[MinValueValidator(1), MaxValueValidator(20)])
    max_tokens = models.PositiveIntegerField(default=16, validators=[MinValueValidator(1), MaxValueValidator(4096)])
    concurrency = models.PositiveIntegerField(default=8, validators=[MinValueValidator(1), MaxValueValidator(256)])
    # Not below 0: a negative price made the judge's page show a negative cost for its runs.
    price_per_million_prompt_tokens = models.DecimalField(
        max_digits=12, decimal_places=4, null=True, blank=True, validators=[MinValueValidator(0)]
    )
    price_per_million_completion_tokens = models.DecimalField(
        max_digits=12, decimal_places=4, null=True, blank=True, validators=[MinValueValidator(0)]
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="judge_unique_name_per_owner")]

    def __str__(self):
        return self.metric_name

    @property
    def metric_name(self):
        return f"judge:{self.name}"


class JudgeCacheEntry(models.Model):
    """What a judge answered to one prompt: a rerun with the same prompt asks nothing."""

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="cache_entries")
    template_version = models.CharField(max_length=60)
    prompt_hash = models.CharField(max_length=64)
    values = models.JSONField(help_text="Each sample's parsed value; null where the reply could not be read.")
    mean = models.FloatField(null=True)
    spread = models.FloatField(null=True, help_text="Standard deviation of the readable samples.")
    first_reply = models.TextField(blank=True, help_text="The first sample's reply, cut to 500 characters.")
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["judge", "template_version", "prompt_hash"], name="judgecache_unique_key")
        ]
        verbose_name_plural = "judge cache entries"

    def __str__(self):
        return f"{self.judge} {self.prompt_hash[:12]}: {self.values}"


class JudgeUsage(models.Model):
    """Requests, tokens, unreadable replies and cost of one judge in one metric run (or in one
    labelled judging of pairs, which also keeps its position-swap figures)."""

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="usage")
    run = models.ForeignKey(MetricRun, null=True, blank=True, on_delete=models.CASCADE, related_name="judge_usage")
    label = models.CharField(max_length=200, blank=True, help_text="What was judged when not a metric run (pairs).")
    prompts = models.PositiveIntegerField(default=0)
    cached = models.PositiveIntegerField(default=0, help_text="Prompts answered from the cache, with no request.")
    requests = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    unparseable = models.PositiveIntegerField(default=0, help_text="Samples whose reply gave no score.")
    unparseable_example = models.TextField(blank=True)
    figures = models.JSONField(
        default=dict,
        blank=True,
        help_text="Pairs: the latest judging's figures (scoring.judges.pairwise.pairwise_statistics): pairs, "
        "position bias, self-consistency across the swap, agreement with the human winners.",
    )
    # Set when a judging of pairs is queued from the judge's page, cleared when that judging ends:
    # the only trace of a task still in the broker, so that removing the judge can refuse meanwhile.
    queued_at = models.DateTimeField(
        null=True, blank=True, help_text="Pairs: when a judging was queued that has not ended yet."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        # one row per judge and run: chunks on several workers add to it (get_or_create retries the
        # lookup when a twin chunk inserted it first)
        constraints = [models.UniqueConstraint(fields=["judge", "run", "label"], name="judgeusage_unique_run")]

    def __str__(self):
        return f"{self.judge}: {self.requests} requests"

    @property
    def cost(self):
        """Tokens times the judge's prices (per million tokens); None when it has no price."""
        prompt_price = self.judge.price_per_million_prompt_tokens
        completion_price = self.judge.price_per_million_completion_tokens
        if prompt_price is None and completion_price is None:
            return None
        total = self.prompt_tokens * (prompt_price or 0) + self.completion_tokens * (completion_price or 0)
        return total / 1_000_000
