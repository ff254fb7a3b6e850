"""How an annotator of the shareable link proves who they are, and where new identities came from."""

from django.db import models

from annotation.models.ratings import Annotator
from annotation.models.surveys import Survey


class LinkIdentity(models.Model):
    """An annotator identity created on a survey's link.

    `resume_code_hash`: SHA-256 of the random resume code shown to the annotator (the code itself
    is kept only in their browser's signed cookie), so a code lets its holder continue on another
    device while a worker id, which is no secret, never does. `address` and `created_at` count new
    identities per client address for the survey's hourly cap.
    """

    annotator = models.OneToOneField(Annotator, on_delete=models.CASCADE, related_name="link_identity")
    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="link_identities")
    resume_code_hash = models.CharField(max_length=64, unique=True)
    address = models.GenericIPAddressField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        indexes = [models.Index(fields=["survey", "address", "created_at"], name="linkidentity_cap")]
        verbose_name_plural = "link identities"

    def __str__(self):
        return f"link identity of {self.annotator}"
