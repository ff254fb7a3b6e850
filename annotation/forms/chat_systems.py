"""The form that adds or changes a chat system; the key itself is never asked for."""

from django import forms

from annotation.models import ChatSystem
from annotation.services.chat_systems.registry import EDITABLE_FIELDS, NOUN
from config.endpoints.forms import EndpointFormMixin


class ChatSystemForm(EndpointFormMixin, forms.ModelForm):
    endpoint_noun = NOUN
    key_prefixes = ("sk-", "Bearer ")

    base_url = forms.URLField(
        label="Base URL",
        max_length=500,
        assume_scheme="http",  # local servers (vLLM, Ollama, llama.cpp) are usually plain http
        help_text="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (RateLab posts to …/chat/completions).",
    )

    class Meta:
        model = ChatSystem
        fields = list(EDITABLE_FIELDS)
        labels = {
            "api_key_env": "API key variable",
            "system_prompt": "System prompt",
            "max_tokens": "Max tokens per reply",
            "timeout_seconds": "Reply timeout (seconds)",
            "connect_timeout_seconds": "Connection timeout (seconds)",
        }
        widgets = {"system_prompt": forms.Textarea(attrs={"rows": 3})}

    def __init__(self, *args, owner, **kwargs):
        super().__init__(*args, **kwargs)
        self.owner = owner
        self.key_variables_help()

    def clean_name(self):
        name = self.cleaned_data["name"]
        others = ChatSystem.objects.filter(owner=self.owner, name=name).exclude(pk=self.instance.pk)
        if others.exists():
            raise forms.ValidationError("You already have a chat system with this name; choose another.")
        return name


class ChatSystemTestForm(forms.Form):
    message = forms.CharField(
        max_length=2000,
        initial="Hello! How are you today?",
        help_text=f"One message sent to the {NOUN} as an annotator's first turn.",
    )
