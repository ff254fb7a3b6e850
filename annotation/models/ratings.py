import secrets

from django.db import models
from django.db.models import Q

from annotation.models.datasets import Context, Response
from annotation.models.surveys import Survey


def new_assignment_token():
    return secrets.token_urlsafe(24)


class Annotator(models.Model):
    """A person who rates, identified by the crowd provider's worker id."""

    provider = models.CharField(max_length=10)
    worker_id = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["provider", "worker_id"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "worker_id"], name="annotator_unique_worker"),
            models.CheckConstraint(condition=~Q(worker_id=""), name="annotator_worker_not_empty"),
        ]

    def __str__(self):
        return f"{self.provider}:{self.worker_id}"


class AttentionCheck(models.Model):
    """A researcher-defined gold item: a context, a response and the scores accepted for it."""

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="attention_checks")
    turns = models.JSONField(default=list)
    response_text = models.TextField()
    accepted_scores = models.JSONField(default=list)

    def __str__(self):
        return f"check {self.pk} of {self.survey}"


class HIT(models.Model):
    """One page of work: several items, done by `assignments_per_hit` distinct annotators."""

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="hits")
    position = models.PositiveIntegerField()
    external_id = models.CharField(max_length=200, blank=True, help_text="The provider's HIT id, if any.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["survey", "position"]
        verbose_name, verbose_name_plural = "HIT", "HITs"
        constraints = [models.UniqueConstraint(fields=["survey", "position"], name="hit_unique_position")]

    def __str__(self):
        return f"{self.survey} HIT {self.position}"


class HITPage(models.Model):
    """A HIT's items rendered once, as every annotator who has no answers on it yet sees them.

    Rendered after launch (`annotation.views.task_page.stored.hit_pages_render`) and read by every worker
    process, so that a crowd arriving at once is not rendering the same HTML in each process.
    `version` names the templates and code it was rendered by: a page of another version is
    ignored (and rendered again), never shown.
    """

    hit = models.OneToOneField(HIT, on_delete=models.CASCADE, primary_key=True, related_name="page")
    version = models.CharField(max_length=40)
    html = models.TextField()
    n_fields = models.PositiveIntegerField()
    n_items = models.PositiveIntegerField()
    # Overlap items drop out for an annotator who rated them on another HIT: the stored page then
    # holds only for annotators new to the survey.
    has_overlap = models.BooleanField()

    class Meta:
        verbose_name = "HIT page"

    def __str__(self):
        return f"{self.hit} page ({self.version[:8]})"


class HITItem(models.Model):
    """One thing to judge on a HIT: a real response, a gold check, or an instructed check.

    A check's block also holds filler replies (`gold_filler` beside a gold reply, `instr_filler`
    beside an instruction: a real response, shown so that the block is as large as a real one;
    see annotation/kinds/rating/checks.py), and a pairwise check's block filler pairs
    (`pair_filler`: two real responses to the block's context; annotation/kinds/pairwise/layout.py).
    Their answers are checked and never stored, so they reach no analysis. An instructed check laid
    out with fillers has `context` set (the borrowed conversation shown above it); one laid out
    before fillers existed has none and shows alone.
    """

    class Kind(models.TextChoices):
        RESPONSE = "response", "Response"
        GOLD = "gold", "Gold attention check"
        GOLD_FILLER = "gold_filler", "Filler reply beside a gold check (not analysed)"
        INSTRUCTED = "instructed", "Instructed attention check"
        INSTRUCTED_FILLER = "instr_filler", "Filler reply beside an instructed check (not analysed)"
        WRITE = "write", "Write a next turn"
        PAIR = "pair", "Pair of replies"
        PAIR_GOLD = "pair_gold", "Pair with a broken reply (attention check)"
        PAIR_REPEAT = "pair_repeat", "Repeated pair, sides swapped (consistency check)"
        PAIR_FILLER = "pair_filler", "Filler pair beside a pairwise check (not analysed)"
        BWS = "bws", "Tuple of replies: pick the best and the worst"
        BWS_GOLD = "bws_gold", "Tuple with a broken reply that must be picked worst (attention check)"
        BWS_FILLER = "bws_filler", "Filler tuple beside a best-worst check (not analysed)"
        CONVERSATION = "conversation", "Conversation"
        CONV_GOLD = "conv_gold", "Conversation with a planted flaw (attention check)"
        CONV_PAIR = "conv_pair", "Pair of conversations"
        CONV_PAIR_GOLD = "conv_pgold", "Pair of conversations, one broken (attention check)"
        CHAT = "chat", "A live chat with a system"
        CONV_PAIR_REPEAT = "conv_prepeat", "Repeated pair of conversations, sides swapped (consistency check)"

    # Replies (or pairs) shown in a check's block only to give it a real block's shape: answered,
    # never stored.
    FILLERS = (Kind.GOLD_FILLER, Kind.INSTRUCTED_FILLER, Kind.PAIR_FILLER, Kind.BWS_FILLER)

    hit = models.ForeignKey(HIT, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField()
    kind = models.CharField(max_length=12, choices=Kind.choices)
    context = models.ForeignKey(Context, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    response = models.ForeignKey(Response, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    attention_check = models.ForeignKey(AttentionCheck, null=True, blank=True, on_delete=models.CASCADE)
    # Pair items: `response` is shown on the left (A), `response_b` on the right (B); the sides were
    # drawn at random when the HIT was laid out, so this row records them. A gold pair has one side
    # empty and `broken_text` shown there; a repeat points at the item it repeats with sides swapped.
    response_b = models.ForeignKey(Response, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    broken_text = models.TextField(blank=True)
    repeat_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="repeats")
    instructed_score = models.IntegerField(null=True, blank=True)
    # Best-worst tuples: the response ids in the order shown; a gold tuple's broken reply is a null
    # entry, shown as `broken_text` (annotation/kinds/bws/layout.py).
    tuple_responses = models.JSONField(default=list, blank=True)
    # Conversation items (annotation/kinds/conversation, kinds/acute): the conversation shown (on the
    # left for a pair) and the other side of a pair. A gold conversation is a real one with one
    # system turn replaced (`planted_turn`, its index) by `broken_text`. A gold pair shows
    # `conversation` on the side `instructed_score` names (0 left, 1 right) and, on the other, the
    # same conversation with its every system turn replaced by `broken_text`.
    conversation = models.ForeignKey(
        "annotation.Conversation", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    conversation_b = models.ForeignKey(
        "annotation.Conversation", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    planted_turn = models.PositiveIntegerField(null=True, blank=True)
    is_overlap = models.BooleanField(default=False)

    class Meta:
        ordering = ["hit", "position"]
        verbose_name = "HIT item"
        constraints = [
            models.UniqueConstraint(fields=["hit", "position"], name="hititem_unique_position"),
            models.CheckConstraint(
                condition=~Q(kind="response") | Q(response__isnull=False), name="hititem_response_has_response"
            ),
            models.CheckConstraint(
                condition=~Q(kind="gold") | Q(attention_check__isnull=False), name="hititem_gold_has_check"
            ),
            models.CheckConstraint(
                condition=~Q(kind="gold_filler") | Q(attention_check__isnull=False, response__isnull=False),
                name="hititem_gold_filler_has_both",
            ),
            models.CheckConstraint(
                condition=~Q(kind="instructed") | Q(instructed_score__isnull=False),
                name="hititem_instructed_has_score",
            ),
            models.CheckConstraint(
                condition=~Q(kind="instr_filler") | Q(context__isnull=False, response__isnull=False),
                name="hititem_instr_filler_has_both",
            ),
            models.CheckConstraint(condition=~Q(kind="write") | Q(context__isnull=False), name="hititem_write_ctx"),
            models.CheckConstraint(
                condition=~Q(kind__in=["conversation", "conv_gold"]) | Q(conversation__isnull=False),
                name="hititem_conversation_has_one",
            ),
            models.CheckConstraint(
                condition=~Q(kind="conv_pair") | Q(conversation__isnull=False, conversation_b__isnull=False),
                name="hititem_conv_pair_has_both",
            ),
            models.CheckConstraint(
                condition=~Q(kind="conv_pgold") | Q(conversation__isnull=False, instructed_score__in=[0, 1]),
                name="hititem_conv_pair_gold_has_side",
            ),
            models.CheckConstraint(
                condition=~Q(kind__in=["pair", "pair_repeat"]) | Q(response__isnull=False, response_b__isnull=False),
                name="hititem_pair_has_both",
            ),
            models.CheckConstraint(
                condition=~Q(kind="pair_filler")
                | Q(context__isnull=False, response__isnull=False, response_b__isnull=False),
                name="hititem_pair_filler_has_all",
            ),
        ]

    def __str__(self):
        return f"{self.hit} item {self.position} ({self.kind})"

    @property
    def asks_main_only(self):
        """Whether the item asks only the main question: an instructed check laid out alone, as
        before fillers existed (no borrowed context). Every other item asks every question."""
        return self.kind == self.Kind.INSTRUCTED and self.context_id is None


class Assignment(models.Model):
    """One annotator's slot on a HIT. Open slots are handed out; abandoned ones return to the pool."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        ACTIVE = "active", "In progress"
        SUBMITTED = "submitted", "Submitted"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"

    # Work the annotator handed in, whatever the review made of it since.
    FINISHED = (Status.SUBMITTED, Status.APPROVED, Status.REJECTED)

    hit = models.ForeignKey(HIT, on_delete=models.CASCADE, related_name="assignments")
    slot = models.PositiveIntegerField()
    annotator = models.ForeignKey(
        Annotator, null=True, blank=True, on_delete=models.PROTECT, related_name="assignments"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    token = models.CharField(max_length=64, unique=True, default=new_assignment_token, editable=False)
    assigned_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    flagged = models.BooleanField(default=False)
    external_id = models.CharField(max_length=200, blank=True, help_text="The provider's assignment id, if any.")
    external_status = models.CharField(max_length=30, blank=True)
    # A platform that re-offers a rejected submission's place (Prolific) gets a new open slot on the
    # same HIT for it; this rejected one then no longer counts among the HIT's slots.
    replaced = models.BooleanField(
        default=False, help_text="Rejected, and a new open slot on the same HIT took its place."
    )

    class Meta:
        ordering = ["hit", "slot"]
        constraints = [
            models.UniqueConstraint(fields=["hit", "slot"], name="assignment_unique_slot"),
            models.UniqueConstraint(
                fields=["hit", "annotator"], condition=Q(annotator__isnull=False), name="assignment_one_per_annotator"
            ),
            models.CheckConstraint(
                condition=Q(status="open") | Q(annotator__isnull=False), name="assignment_taken_has_annotator"
            ),
        ]
        indexes = [models.Index(fields=["status", "expires_at"])]

    def __str__(self):
        return f"{self.hit} slot {self.slot} ({self.status})"


class Rating(models.Model):
    """One annotator's score for one response on one aspect. Imported ratings have no assignment."""

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="ratings")
    annotator = models.ForeignKey(Annotator, on_delete=models.PROTECT, related_name="ratings")
    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="ratings")
    aspect = models.SlugField(max_length=50, default="overall")
    score = models.IntegerField()
    seconds = models.FloatField(null=True, blank=True, help_text="Time the annotator spent on the item.")
    assignment = models.ForeignKey(Assignment, null=True, blank=True, on_delete=models.CASCADE, related_name="ratings")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["survey", "response", "annotator"]
        constraints = [
            models.UniqueConstraint(
                fields=["survey", "annotator", "response", "aspect"], name="rating_once_per_annotator_response"
            ),
        ]
        indexes = [models.Index(fields=["survey", "aspect"])]

    def __str__(self):
        return f"{self.annotator} gave {self.score} ({self.aspect})"


class AttentionAnswer(models.Model):
    """An annotator's answer to an attention-check item, and whether it passed."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="attention_answers")
    item = models.ForeignKey(HITItem, on_delete=models.CASCADE, related_name="attention_answers")
    score = models.IntegerField()
    passed = models.BooleanField()
    seconds = models.FloatField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["assignment", "item"], name="attentionanswer_once")]

    def __str__(self):
        return f"{self.assignment} check {self.item_id}: {'pass' if self.passed else 'fail'}"


class WrittenResponse(models.Model):
    """A next turn an annotator wrote (task type `write`); reviewed before it becomes a Response."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending review"
        ACCEPTED = "accepted", "Accepted"
        REJECTED = "rejected", "Rejected"

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="written_responses")
    item = models.ForeignKey(HITItem, on_delete=models.CASCADE, related_name="written_responses")
    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="written_responses")
    text = models.TextField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    response = models.OneToOneField(Response, null=True, blank=True, on_delete=models.SET_NULL)
    seconds = models.FloatField(null=True, blank=True)
    # How the reply came about, as the task page's script counted it (keys: annotation.kinds.writing.
    # telemetry.FIELDS): None when nothing was recorded (a page without script, an import).
    telemetry = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["assignment", "item"], name="writtenresponse_once")]

    def __str__(self):
        return self.text[:60]
