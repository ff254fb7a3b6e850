"""System checks of the judges' settings (ids `scoring.E001`...)."""

from django.conf import settings
from django.core.checks import Error, register


@register()
def check_judge_key_variables(app_configs, **kwargs):
    """scoring.E001: JUDGE_KEY_VARIABLES assigns a variable no judge may read (one of the server's own
    secrets, or a name not ending in _KEY): every judge naming it would be refused at run time."""
    from scoring.services.judges.registry import key_variable_name_problem  # the rule the judges use

    errors = []
    for owner, variables in settings.JUDGE_KEY_VARIABLES.items():
        for variable in variables:
            problem = key_variable_name_problem(variable)
            if problem:
                errors.append(
                    Error(
                        f"JUDGE_KEY_VARIABLES assigns {variable} (to {owner}): {problem}",
                        hint="Assign a variable that holds only a judge's API key, e.g. LAB_OPENAI_KEY.",
                        id="scoring.E001",
                    )
                )
    return errors
