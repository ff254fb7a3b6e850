from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator

from scoring.models import Judge
from scoring.services.judges.registry import api_key_env_problem, assigned_key_variables, base_url_problem


class JudgeForm(forms.ModelForm):
    """A new judge of the signed-in researcher; the key itself is never asked for."""

    base_url = forms.URLField(
        label="Base URL",
        max_length=500,
        assume_scheme="http",  # local servers (vLLM, Ollama, llama.cpp) are usually plain http
        help_text="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1",
    )

    class Meta:
        model = Judge
        fields = [
            "name",
            "base_url",
            "model",
            "api_key_env",
            "template",
            "temperature",
            "samples",
            "max_tokens",
            "concurrency",
            "price_per_million_prompt_tokens",
            "price_per_million_completion_tokens",
        ]
        labels = {
            "base_url": "Base URL",
            "api_key_env": "API key variable",
            "price_per_million_prompt_tokens": "Price per million prompt tokens",
            "price_per_million_completion_tokens": "Price per million completion tokens",
        }
        help_texts = {"name": "Its scores become the metric judge:NAME."}

    def __init__(self, *args, owner, **kwargs):
        super().__init__(*args, **kwargs)
        self.owner = owner
        for name in ("samples", "max_tokens", "concurrency"):
            _bounded_by_model(self.fields[name], Judge._meta.get_field(name))
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
        if Judge.objects.filter(owner=self.owner, name=name).exists():
            raise forms.ValidationError("You already have a judge with this name; choose another.")
        return name

    def clean_base_url(self):
        value = self.cleaned_data["base_url"]
        # the service's rule, shared with judge_add (the scheme, the operator's host list)
        problem = base_url_problem(value)
        if problem:
            raise forms.ValidationError(problem)
        return value

    def clean_api_key_env(self):
        value = self.cleaned_data["api_key_env"]
        if value.startswith("sk-"):
            raise forms.ValidationError("Give the NAME of the environment variable that holds the key, not the key.")
        # A name that is no variable name at all gets the model's own message (its validator).
        problem = api_key_env_problem(value, owner=self.owner) if value.replace("_", "a").isalnum() else ""
        if problem:
            raise forms.ValidationError(problem)
        return value


def _bounded_by_model(field, model_field):
    """The form field takes the model's own bounds. A PositiveIntegerField's form field says
    "greater than or equal to 0" (and the browser's `min` allows 0) for a value the model then
    refuses under 1: -5 concurrency was told the wrong minimum."""
    for validator in model_field.validators:
        if isinstance(validator, MinValueValidator):
            field.min_value = validator.limit_value
            field.widget.attrs["min"] = validator.limit_value
        elif isinstance(validator, MaxValueValidator):
            field.max_value = validator.limit_value
            field.widget.attrs["max"] = validator.limit_value
    field.validators = [v for v in field.validators if not isinstance(v, (MinValueValidator, MaxValueValidator))]
    field.validators += [MinValueValidator(field.min_value), MaxValueValidator(field.max_value)]
