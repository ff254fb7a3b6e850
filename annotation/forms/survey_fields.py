"""The survey form's own field and widget types and the Prolific wording it shows beside them (kept
apart so annotation/forms/surveys.py holds the form itself)."""

from django import forms

from annotation.crowd.prolific.pay import HOURLY_FLOOR_CENTS, MINOR_UNITS, min_reward_cents, money
from annotation.crowd.prolific.study import DEFAULT_MINUTES, setup_problems


class SystemChoiceField(forms.MultipleChoiceField):
    """Ticked system names; a comma-separated string (a script's POST) is read the same way.
    Unknown names are reported by SurveyForm.clean, which names them."""

    def to_python(self, value):
        values = value if isinstance(value, (list, tuple)) else [value or ""]
        return [name.strip() for item in values for name in str(item).split(",") if name.strip()]

    def validate(self, value):
        forms.Field.validate(self, value)


def prolific_reward_help(currency, *, workspace_known):
    """What the reward field says about Prolific (shown only when Prolific is chosen, survey_form.js):
    its floor in the currency studies are paid in, in the researcher's words (no server variables).

    The form cannot ask Prolific (no request while a form is filled in), so it says which currency
    it assumes and whether publishing checks it against the workspace."""
    least = min_reward_cents(DEFAULT_MINUTES, currency)
    check = (
        "Publishing checks this currency against your Prolific workspace's."
        if workspace_known
        else f"RateLab cannot ask Prolific which currency your workspace pays in: if it is not {currency}, choose "
        "the study's currency on its Prolific page before publishing."
    )
    return (
        f"On Prolific, in {MINOR_UNITS[currency]} of {currency}, the currency this server's Prolific workspace pays "
        f"in. Prolific pays at least {money(HOURLY_FLOOR_CENTS[currency], currency)} an hour: "
        f"for the {DEFAULT_MINUTES} minutes a Prolific study is first estimated at, that is at least {least} "
        f"{MINOR_UNITS[currency]} (choosing Prolific fills it in). {check} Change the reward and minutes together "
        "on the survey's Prolific page."
    )


def prolific_unavailable_reason():
    """Why this server cannot publish on Prolific, in a researcher's words, or "" when it can
    (setup_problems names the variables: that is for the refusal, which says who must set them)."""
    reasons = []
    for problem in setup_problems():
        reasons.append("no Prolific API token" if "TOKEN" in problem else "no public https address")
    return " and ".join(reasons)


class ProviderSelect(forms.Select):
    """The platform choice, with a platform this server cannot use shown but not selectable."""

    unavailable = frozenset()

    def create_option(self, *args, **kwargs):
        option = super().create_option(*args, **kwargs)
        # Not when chosen already (a refused form shown again): a disabled chosen option is sent as no
        # choice at all, and the survey would be made for the built-in link without a word.
        if option["value"] in self.unavailable and not option["selected"]:
            option["attrs"]["disabled"] = True
        return option
