"""What the forms of a researcher's endpoints (LLM judges, chat systems) check alike: the key variable's
help text (the variables the operator assigned), and the base URL and key variable refused with the
rules' own words (config/endpoints/rules.py, which the services apply again on save and before every
request)."""

from django import forms

from config.endpoints.rules import api_key_env_problem, assigned_key_variables, base_url_problem


class EndpointFormMixin:
    """For a ModelForm with `base_url` and `api_key_env` fields and an `owner` (set before
    `key_variables_help()` is called)."""

    # What the refusals call the endpoint.
    endpoint_noun = "judge"
    # How a pasted key (instead of its variable's name) begins.
    key_prefixes = ("sk-",)

    def key_variables_help(self):
        mine = assigned_key_variables(self.owner)
        self.fields["api_key_env"].help_text = (
            "Name of the environment variable holding the API key (empty: the server needs none). "
            + (
                f"The operator assigned you: {', '.join(mine)}."
                if mine
                else "The operator has assigned you no key variable (JUDGE_KEY_VARIABLES): only keyless servers."
            )
        )

    def clean_base_url(self):
        value = self.cleaned_data["base_url"]
        problem = base_url_problem(value, noun=self.endpoint_noun)
        if problem:
            raise forms.ValidationError(problem)
        return value

    def clean_api_key_env(self):
        value = self.cleaned_data["api_key_env"]
        if value.startswith(self.key_prefixes):
            raise forms.ValidationError("Give the NAME of the environment variable that holds the key, not the key.")
        # A name that is no variable name at all gets the model's own message (its validator).
        valid_name = value.replace("_", "a").isalnum()
        problem = api_key_env_problem(value, owner=self.owner, noun=self.endpoint_noun) if valid_name else ""
        if problem:
            raise forms.ValidationError(problem)
        return value
