"""What a researcher writes for a rating survey's questions and checks: the extra aspects' meanings
(on the survey form and on a page of their own) and gold checks, one per line."""

from django import forms

from annotation.services.text.aspect_details import (
    DEFAULT_HIGH,
    DEFAULT_LOW,
    DEFINITION_MAX,
    LABEL_MAX,
    aspect_details_parse,
)

ASPECT_DETAILS_HELP = (
    "One line per extra aspect: its name, a colon, what it means in one sentence (at most "
    f"{DEFINITION_MAX} characters), then the labels of the scale's ends (at most {LABEL_MAX} characters each; "
    "other points too if you like) after |, e.g. `topicality: Does the reply stay on the conversation's "
    "topic? | 1 = Off topic | 5 = Fully on topic`. Annotators see the sentence under the question. An aspect "
    f"without labels shows 1 = {DEFAULT_LOW} · 5 = {DEFAULT_HIGH}."
)


class AspectDetailsForm(forms.Form):
    """A draft rating survey's aspect definitions and labels, changed on a page of their own."""

    aspect_details = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 5}), label="What the extra aspects mean",
        help_text=ASPECT_DETAILS_HELP,
    )  # fmt: skip

    def __init__(self, *args, scales, **kwargs):
        super().__init__(*args, **kwargs)
        self.scales = scales

    def clean_aspect_details(self):
        text = self.cleaned_data["aspect_details"]
        for problem in aspect_details_parse(text, self.scales)[1]:
            self.add_error("aspect_details", problem)
        return text


def gold_lines_parse(text):
    """`(checks, problems)`: the gold checks written one per line (`turns => response => scores`,
    turns separated by |) as survey_create takes them, and what is wrong with the other lines."""
    checks, problems = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = [p.strip() for p in line.split("=>")]
        try:
            turns, response, scores = parts
            accepted = sorted({int(s) for s in scores.split(",") if s.strip()})
        except ValueError:
            problems.append(f"Line {number}: write `turns => response => scores`.")
            continue
        if not response or not accepted or not all(1 <= s <= 5 for s in accepted):
            problems.append(f"Line {number}: needs a response and scores between 1 and 5.")
            continue
        checks.append(
            {
                "turns": [t.strip() for t in turns.split("|") if t.strip()],
                "response_text": response,
                "accepted_scores": accepted,
            }
        )
    return checks, problems
