from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.services.text.reserved import REFERENCE_SYSTEM_NAME  # noqa: F401 (re-exported: the pseudo-system's name)


class Dataset(models.Model):
    """A set of dialogue contexts with references and candidate responses."""

    # Unique per owner (constraint below), not site-wide: "a dataset named 'demo' already exists"
    # must not tell one researcher what another has.
    name = models.CharField(max_length=200)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="datasets"
    )
    description = models.TextField(blank=True)
    meta = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=~Q(name=""), name="dataset_name_not_empty"),
            # Rows without an owner (legacy, or their owner's account deleted) are not covered: NULLs
            # are distinct, so deleting an account never fails; creating one checks it (services).
            models.UniqueConstraint(fields=["owner", "name"], name="dataset_unique_name_per_owner"),
        ]
        # Staff read every study; only the owner, a superuser or a holder of this may change one.
        permissions = [("manage_any_study", "Can change any researcher's datasets and surveys")]

    def __str__(self):
        return self.name


class Context(models.Model):
    """A conversation so far: an ordered list of turns, each `{"speaker": str|None, "text": str}`."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="contexts")
    external_id = models.CharField(max_length=200, help_text="The context_id in the imported file.")
    position = models.PositiveIntegerField(help_text="Order of the context in its file.")
    turns = models.JSONField(default=list)
    meta = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["dataset", "position"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "external_id"], name="context_unique_id_per_dataset"),
            models.UniqueConstraint(fields=["dataset", "position"], name="context_unique_position_per_dataset"),
            models.CheckConstraint(condition=~Q(external_id=""), name="context_id_not_empty"),
        ]

    def __str__(self):
        return f"{self.dataset.name}:{self.external_id}"


class Reference(models.Model):
    """A reference (gold) response to a context; a context has zero or more."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="references")
    position = models.PositiveIntegerField(default=0)
    text = models.TextField()

    class Meta:
        ordering = ["context", "position"]
        constraints = [
            models.UniqueConstraint(fields=["context", "position"], name="reference_unique_position"),
        ]

    def __str__(self):
        return self.text[:60]


class WithReferences(models.Manager):
    """Every row, the reference pseudo-system's included (the base manager of System and Response)."""


class WithoutReferenceSystems(models.Manager):
    """Systems that produced responses: the reference pseudo-system is left out."""

    def get_queryset(self):
        return super().get_queryset().filter(is_reference=False)


class WithoutReferenceResponses(models.Manager):
    """Responses of real systems: the reference pseudo-system's copies of the references are left out."""

    def get_queryset(self):
        return super().get_queryset().filter(system__is_reference=False)


class System(models.Model):
    """A source of responses: a dialogue model such as `hred`, or `human`.

    One system per dataset may be the reference pseudo-system (`is_reference`, named
    REFERENCE_SYSTEM_NAME), made on demand by `annotation.kinds.pairwise.references` so that a pairwise
    study can put a context's reference against a system's reply. It is no system to rate, score or
    report on: the default manager (`objects`, and so every related manager and model form) leaves it
    out; the pairwise code, which wants it, asks `with_references` by name. Foreign keys to a
    reference response still resolve (base manager).
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="systems")
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    is_reference = models.BooleanField(
        default=False, help_text="The dataset's references as a pseudo-system (pairwise studies only)."
    )

    objects = WithoutReferenceSystems()
    with_references = WithReferences()

    class Meta:
        ordering = ["dataset", "name"]
        base_manager_name = "with_references"
        constraints = [
            models.UniqueConstraint(fields=["dataset", "name"], name="system_unique_name_per_dataset"),
            models.CheckConstraint(condition=~Q(name=""), name="system_name_not_empty"),
            models.UniqueConstraint(
                fields=["dataset"], condition=Q(is_reference=True), name="system_one_reference_per_dataset"
            ),
        ]

    def __str__(self):
        return self.name


class Response(models.Model):
    """One system's response to one context."""

    context = models.ForeignKey(Context, on_delete=models.CASCADE, related_name="responses")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="responses")
    text = models.TextField(blank=True)
    meta = models.JSONField(default=dict, blank=True)

    objects = WithoutReferenceResponses()
    with_references = WithReferences()  # with the reference pseudo-system's responses (see System)

    class Meta:
        ordering = ["context", "system"]
        base_manager_name = "with_references"
        constraints = [
            models.UniqueConstraint(fields=["context", "system"], name="response_unique_per_context_system"),
        ]

    def __str__(self):
        return self.text[:60]
