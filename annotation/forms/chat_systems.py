"""The form that adds or changes a chat system; the key itself is never asked for."""

from django import forms

from annotation.chat_systems.registry import EDITABLE_FIELDS, NOUN
from annotation.models import ChatSystem
from config.endpoints.rules import api_key_env_problem, assigned_key_variables, base_url_problem


class ChatSystemForm(forms.ModelForm):
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
        mine = assigned_key_variables(owner)
        self.fields["api_key_env"].help_text = (
            "Name of the environment variable holding the API key (empty: the server needs none). "
            + (
                f"The operator assigned you: {', '.join(mine)}."
                if mine
                else "The operator has assigned you no key variable (JUDGE_KEY_VARIABLES): only keyless servers."
            )
        )

    def clean_name(self):
        name = self.cleaned_data["name"]
        others = ChatSystem.objects.filter(owner=self.owner, name=name).exclude(pk=self.instance.pk)
        if others.exists():
            raise forms.ValidationError("You already have a chat system with this name; choose another.")
        return name

    def clean_base_url(self):
        value = self.cleaned_data["base_url"]
        # the rule the service applies again on save and before every request
        problem = base_url_problem(value, noun=NOUN)
        if problem:
            raise forms.ValidationError(problem)
        return value

    def clean_api_key_env(self):
        value = self.cleaned_data["api_key_env"]
        if value.startswith(("sk-", "Bearer ")):
            raise forms.ValidationError("Give the NAME of the environment variable that holds the key, not the key.")
        # A name that is no variable name at all gets the model's own message (its validator).
        problem = api_key_env_problem(value, owner=self.owner, noun=NOUN) if value.replace("_", "a").isalnum() else ""
        if problem:
            raise forms.ValidationError(problem)
        return value


class ChatSystemTestForm(forms.Form):
    message = forms.CharField(
        max_length=2000,
        initial="Hello! How are you today?",
        help_text=f"One message sent to the {NOUN} as an annotator's first turn.",
    )
