"""Chat systems: a researcher's dialogue systems behind OpenAI-compatible endpoints, for live chat studies.

Registered like an LLM judge (scoring): the base URL of a /chat/completions endpoint, the model it
serves, and the NAME of the environment variable holding its key, never the key (read when a request
is made, under the operator's rules in config.endpoints.rules).
"""

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

key_variable_validator = RegexValidator(
    r"^[A-Za-z_][A-Za-z0-9_]{0,99}$",
    "An environment variable name: letters, digits and '_', not starting with a digit.",
)


class ChatSystem(models.Model):
    """A dialogue system an annotator chats with; the system prompt goes first in every request."""

    # Unique per owner: a chat system is its researcher's alone (refusals must not reveal others' names).
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chat_systems")
    name = models.CharField(
        max_length=100,
        validators=[RegexValidator(r"^[\w.+-]+$", "Letters, digits and . _ + - only (no spaces).")],
        help_text="Its conversations are the system of this name in a dataset (never shown to annotators).",
    )
    base_url = models.URLField(max_length=500, help_text="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    model = models.CharField(max_length=200)
    api_key_env = models.CharField(
        max_length=100,
        blank=True,
        validators=[key_variable_validator],
        help_text="Name of the environment variable holding the API key (empty: the server needs none).",
    )
    system_prompt = models.TextField(blank=True, max_length=4000)
    temperature = models.FloatField(default=0.7, validators=[MinValueValidator(0.0), MaxValueValidator(2.0)])
    max_tokens = models.PositiveIntegerField(default=256, validators=[MinValueValidator(1), MaxValueValidator(8192)])
    # An annotator waits for the reply: a reply later than this is a failed turn they may try again.
    timeout_seconds = models.FloatField(default=30.0, validators=[MinValueValidator(1.0), MaxValueValidator(300.0)])
    connect_timeout_seconds = models.FloatField(
        default=5.0, validators=[MinValueValidator(0.5), MaxValueValidator(60.0)]
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="chatsystem_unique_name_per_owner")]

    def __str__(self):
        return self.name
