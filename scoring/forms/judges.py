from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator

from config.endpoints.forms import EndpointFormMixin
from scoring.models import Judge


class JudgeForm(EndpointFormMixin, forms.ModelForm):
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
        self.key_variables_help()

    def clean_name(self):
        name = self.cleaned_data["name"]
        if Judge.objects.filter(owner=self.owner, name=name).exists():
            raise forms.ValidationError("You already have a judge with this name; choose another.")
        return name


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
