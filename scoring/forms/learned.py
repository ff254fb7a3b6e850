from django import forms

from annotation.selectors import datasets_changeable_by
from scoring.learned import reference_free
from scoring.models import AdemModel
from scoring.models.adem import model_name_validator
from scoring.services.learned.training import DEFAULT_FOLDS, LEARNED_KINDS

PRECISION_LABELS = {
    "auto": "standard (bfloat16 where native)",
    "float32": "float32 (exact on every CPU)",
    "int8": "int8 (fastest)",
}


class LearnedTrainForm(forms.Form):
    """Train a learned evaluator (issue 41): its kind, the folds of its out-of-fold figures, a seed."""

    name = forms.CharField(
        max_length=100,
        validators=[model_name_validator],
        help_text="Its scores become the metric learned:NAME (NAME being what you type here).",
    )
    dataset = forms.ModelChoiceField(queryset=None)
    kind = forms.ChoiceField(
        choices=[(k, label) for k, label in AdemModel.Kind.choices if k in LEARNED_KINDS],
        initial=AdemModel.Kind.STACKED,
        help_text="Stacked: seconds, over the metric scores the dataset already has (compute metrics first). "
        "Cross-encoder: minutes to hours on a CPU.",
    )
    folds = forms.IntegerField(
        initial=DEFAULT_FOLDS,
        min_value=2,
        max_value=20,
        help_text="Split by context; the figures are pooled over the folds' held-out contexts.",
    )
    seed = forms.IntegerField(initial=0, min_value=0, max_value=2**31 - 1, help_text="A whole number, 0 or more.")
    feature_precision = forms.ChoiceField(
        label="Sentence vectors",
        choices=[(p, PRECISION_LABELS[p]) for p in reference_free.PRECISIONS],
        initial=reference_free.DEFAULT_PRECISION,
        required=False,
        help_text="Stacked only: how MiniLM encodes the texts behind its reference-free features. Standard: "
        "float32, or bfloat16 where the CPU multiplies it natively (1.75x faster, within 1e-4 of float32). "
        "int8: 2.1-2.7x faster than float32; its scores move slightly with the batch they are scored in. "
        "The model always scores in the precision it was trained in.",
    )

    def clean(self):
        cleaned = super().clean()
        precision = cleaned["feature_precision"] = cleaned.get("feature_precision") or reference_free.DEFAULT_PRECISION
        if precision != reference_free.DEFAULT_PRECISION and cleaned.get("kind") != AdemModel.Kind.STACKED:
            self.add_error("feature_precision", "The sentence vectors' precision is offered for the stacked kind only.")
        return cleaned

    def config(self):
        """The kind's settings chosen on the form (none but the defaults for a cross-encoder)."""
        data = self.cleaned_data
        return {"feature_precision": data["feature_precision"]} if data["kind"] == AdemModel.Kind.STACKED else {}

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user
        self.fields["dataset"].queryset = datasets_changeable_by(user=user)

    def clean_name(self):
        name = self.cleaned_data["name"]
        # The user's own names only (unique per owner; ADEM models and learned evaluators share them).
        if AdemModel.objects.filter(owner=self.user, name=name).exists():
            raise forms.ValidationError("You already have a model with this name; choose another.")
        return name
