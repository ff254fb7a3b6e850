import secrets

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q

from annotation.models.datasets import Dataset, System
from annotation.services.text.aspect_details import DEFINITION_MAX


def new_survey_token():
    return secrets.token_urlsafe(16)


class Survey(models.Model):
    """A rating (or writing) study over one dataset."""

    class TaskType(models.TextChoices):
        RATE = "rate", "Rate responses (1-5)"
        WRITE = "write", "Write a next turn"
        PAIRWISE = "pairwise", "Compare two replies (A/B)"
        BWS = "bws", "Best-worst scaling (pick the best and worst of a few replies)"
        CONVERSATION = "conversation", "Rate whole conversations and flag system turns"
        ACUTE = "acute", "Compare two conversations (ACUTE-Eval)"
        CHAT = "chat", "Chat live with a system, then rate the conversation"

    class ReferencePairs(models.TextChoices):
        NONE = "none", "No: systems against each other only"
        ALSO = "also", "Also: the reference as one more side, against every chosen system"
        ONLY = "only", "Only: each chosen system against the reference"

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        LIVE = "live", "Live"
        PAUSED = "paused", "Paused"
        CLOSED = "closed", "Closed"

    class Provider(models.TextChoices):
        LOCAL = "local", "Built-in crowd (shareable link)"
        MTURK = "mturk", "Amazon Mechanical Turk"
        PROLIFIC = "prolific", "Prolific"
        LINK = "link", "Another platform (link and completion code)"
        IMPORTED = "imported", "Imported judgements"

    class AttentionPolicy(models.TextChoices):
        FLAG = "flag", "Flag the assignment"
        EXCLUDE = "exclude", "Exclude the annotator's ratings"
        REJECT = "reject", "Reject the assignment"

    class KappaWeighting(models.TextChoices):
        NONE = "none", "Unweighted"
        LINEAR = "linear", "Linear"
        QUADRATIC = "quadratic", "Quadratic"

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="surveys")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="surveys"
    )
    name = models.CharField(max_length=200)  # unique per owner (constraint below), like a dataset's
    token = models.CharField(max_length=64, unique=True, default=new_survey_token, editable=False)
    # What seeds the HITs' layout (annotation/kinds/base.py, `seeded_rng`). Empty, the default: the
    # survey's id and random token, so no one can work out the layout, checks included. A seed given
    # (the demo's, a study reproduced from its script) lays the same data out the same way every time.
    layout_seed = models.CharField(max_length=64, blank=True, default="")
    task_type = models.CharField(max_length=12, choices=TaskType.choices, default=TaskType.RATE)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    provider = models.CharField(max_length=10, choices=Provider.choices, default=Provider.LOCAL)
    systems = models.ManyToManyField(System, blank=True, related_name="surveys")

    instructions = models.TextField(
        blank=True,
        default=(
            "You will read short conversations. For each candidate next turn, judge how appropriate it is "
            "as a reply to the conversation so far. Some items are attention checks: read every item."
        ),
    )
    write_system_name = models.CharField(
        max_length=100, blank=True, help_text="For write tasks: the system that accepted responses join."
    )
    # Issue 40: a reference LLM's replies to the same contexts, imported with the dataset as systems (one
    # system per sample); a written reply very like one of them is flagged (evidence, not proof).
    reference_llm_systems = models.CharField(
        max_length=500,
        blank=True,
        help_text="For write tasks: the dataset's systems (comma-separated) whose responses are a reference "
        "LLM's replies to the same contexts, one system per sample. A written reply very like one is flagged.",
    )

    # Pairwise (A/B) tasks: which pairs are shown and what the annotator may answer.
    pair_budget = models.PositiveIntegerField(
        default=0,
        help_text="Pairwise: comparisons per context spread evenly over system pairs (0 = every pair).",
    )
    reference_pairs = models.CharField(
        max_length=4,
        choices=ReferencePairs.choices,
        default=ReferencePairs.NONE,
        help_text="Pairwise: whether the context's reference is a side (shown to annotators as just another reply).",
    )
    allow_tie = models.BooleanField(default=True, help_text="Pairwise: the annotator may answer 'tie'.")
    ask_strength = models.BooleanField(default=False, help_text="Pairwise: ask how much better (slightly/clearly).")
    ask_reason = models.BooleanField(default=False, help_text="Pairwise: ask for a one-line reason (optional).")
    # Best-worst scaling: how many replies to one context each tuple shows.
    tuple_size = models.PositiveSmallIntegerField(
        default=4, help_text="Best-worst scaling: replies shown together, of which the best and worst are picked."
    )
    # Best-worst scaling across contexts: each tuple shows replies to different conversations (each
    # under its own), so replies are scaled against every other reply, not only their context's.
    bws_across_contexts = models.BooleanField(
        default=False,
        help_text="Best-worst scaling: each set shows replies to different conversations, each under its own.",
    )

    # HIT layout
    contexts_per_hit = models.PositiveIntegerField(default=5)
    assignments_per_hit = models.PositiveIntegerField(default=3)
    attention_checks_per_hit = models.PositiveIntegerField(default=1)
    overlap_contexts = models.PositiveIntegerField(
        default=0, help_text="Contexts that every annotator rates, for agreement statistics."
    )
    max_hits_per_annotator = models.PositiveIntegerField(default=10)
    assignment_minutes = models.PositiveIntegerField(default=60)
    # The shareable link's guard against one client taking every slot with made-up identities.
    new_annotators_per_address_hour = models.PositiveIntegerField(
        default=10, help_text="New annotators the link accepts from one network address per hour."
    )
    reward_cents = models.PositiveIntegerField(default=50)
    attention_policy = models.CharField(max_length=10, choices=AttentionPolicy.choices, default=AttentionPolicy.FLAG)

    # Quality control
    kappa_threshold = models.FloatField(default=0.2)
    kappa_weighting = models.CharField(max_length=10, choices=KappaWeighting.choices, default=KappaWeighting.NONE)
    min_pair_overlap = models.PositiveIntegerField(default=5)
    min_seconds_per_item = models.FloatField(default=1.5)
    # Pairwise-only rules, off by default: switching them on for a study already analysed would
    # quietly drop annotators from it, so a researcher opts in (see annotation/quality/rules.py).
    max_position_bias = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(0.5)],
        help_text="Pairwise: exclude an annotator whose share of left choices is further than this from 0.5 "
        "(0.3: below 0.2 or above 0.8). Empty: rule off.",
    )
    min_position_judgements = models.PositiveIntegerField(
        default=20,
        validators=[MinValueValidator(1)],
        help_text="Pairwise: decisive choices (not ties) an annotator needs before position bias can exclude them.",
    )
    min_repeat_consistency = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Pairwise: exclude an annotator who answers a smaller share of swapped repeats consistently. "
        "Empty: rule off.",
    )
    min_repeats = models.PositiveIntegerField(
        default=3,
        validators=[MinValueValidator(1)],
        help_text="Pairwise: swapped repeats an annotator needs before consistency can exclude them.",
    )
    # Integrity rules (issue 40), off by default for the same reason: they judge flags and competence
    # (annotation/quality/integrity_report.py), which are evidence, so a researcher opts in.
    max_pasted_share = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Exclude a worker more than this share of whose written replies are flagged mostly pasted "
        "(0.5: more than half). Empty: rule off.",
    )
    min_competence = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Exclude a worker whose estimated competence (the ordinal spammer model on a rating scale, MACE "
        "otherwise) is below this. Empty: rule off.",
    )

    created_at = models.DateTimeField(auto_now_add=True)
    launched_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    # Set with the survey's consent page or pre-task questions (annotation.services.consent): the
    # entry pages read it from the survey row they load anyway, so a survey without them pays no
    # query for the check on the annotator's hot path.
    asks_before_tasks = models.BooleanField(default=False, editable=False)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=~Q(name=""), name="survey_name_not_empty"),
            models.UniqueConstraint(fields=["owner", "name"], name="survey_unique_name_per_owner"),
            models.CheckConstraint(condition=Q(contexts_per_hit__gte=1), name="survey_contexts_per_hit_positive"),
            models.CheckConstraint(condition=Q(assignments_per_hit__gte=1), name="survey_assignments_positive"),
        ]

    def __str__(self):
        return self.name

    @property
    def layout_seed_public(self):
        """Whether exports may state the layout seed: only once the survey is closed, since with the
        dataset it tells where every attention check sits (the datasheet, the survey page)."""
        return bool(self.layout_seed) and self.status == self.Status.CLOSED


class Aspect(models.Model):
    """One rating scale of a survey: `overall` always, plus optional extras (topicality, ...)."""

    OVERALL = "overall"

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="aspects")
    key = models.SlugField(max_length=50)
    position = models.PositiveIntegerField(default=0)
    question = models.TextField(default="How appropriate is this response to the conversation?")
    # What the aspect means, shown under its question on the task page (escaped, like all text there).
    definition = models.CharField(max_length=DEFINITION_MAX, blank=True, default="")
    scale_min = models.IntegerField(default=1)
    scale_max = models.IntegerField(default=5)
    scale_labels = models.JSONField(
        default=dict, blank=True, help_text='Labels per value, e.g. {"1": "Not appropriate", "5": "Very reasonable"}.'
    )
    # Conversation surveys: asked of each system turn rather than of the whole conversation; on a
    # 0-1 scale it is a yes/no flag (a checkbox: "repetitive", "contradiction").
    per_turn = models.BooleanField(default=False)

    class Meta:
        ordering = ["survey", "position"]
        constraints = [
            models.UniqueConstraint(fields=["survey", "key"], name="aspect_unique_key_per_survey"),
            models.CheckConstraint(condition=Q(scale_max__gt=F("scale_min")), name="aspect_scale_ordered"),
        ]

    def __str__(self):
        return self.key

    @property
    def values(self):
        return list(range(self.scale_min, self.scale_max + 1))
