from django import forms

from annotation.selectors import datasets_changeable_by
from scoring.adem.choices import KINDS
from scoring.adem.vhred.corpus import CorpusError, text_dialogues
from scoring.models import AdemModel
from scoring.models.adem import model_name_validator


class _DatasetForm(forms.Form):
    dataset = forms.ModelChoiceField(queryset=None)
    encoder = forms.ChoiceField(choices=AdemModel.Encoder.choices, initial=AdemModel.Encoder.MINILM)
    variant = forms.ChoiceField(choices=AdemModel.Variant.choices, initial=AdemModel.Variant.FULL)
    # Seeds numpy's and torch's generators (which take no negative number) and is stored in an
    # integer column: out of range it failed the run, or the page with a server error.
    seed = forms.IntegerField(initial=0, min_value=0, max_value=2**31 - 1, help_text="A whole number, 0 or more.")

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user
        self.fields["dataset"].queryset = datasets_changeable_by(user=user)


class TrainForm(_DatasetForm):
    # Plain text (Django renders help texts unescaped: "adem:<name>" used to show as "adem:.");
    # static/scoring/adem_train.js fills in the name as it is typed.
    name = forms.CharField(
        max_length=100,
        validators=[model_name_validator],
        help_text="Its scores become the metric adem:NAME (NAME being what you type here).",
    )
    precision = forms.ChoiceField(
        choices=AdemModel.Precision.choices,
        initial=AdemModel.Precision.STANDARD,
        required=False,
        help_text="int8 encodes ~1.5x faster on a CPU (MiniLM only); the model then scores in int8 too.",
    )
    folds = forms.IntegerField(
        required=False, min_value=2, max_value=20, help_text="Leave empty for one 70/15/15 split by context."
    )
    field_order = ["name", "dataset", "encoder", "precision", "variant", "seed", "folds"]

    def clean_name(self):
        name = self.cleaned_data["name"]
        # Only the user's own names count: names are unique per owner, and a refusal must not
        # tell one researcher what another has named a model.
        if AdemModel.objects.filter(owner=self.user, name=name).exists():
            raise forms.ValidationError("You already have a model with this name; choose another.")
        return name

    def clean(self):
        cleaned = super().clean()
        precision = cleaned["precision"] = cleaned.get("precision") or AdemModel.Precision.STANDARD
        if precision != AdemModel.Precision.STANDARD and cleaned.get("encoder") != AdemModel.Encoder.MINILM:
            self.add_error("precision", f"{precision} precision is offered for the MiniLM encoder only.")
        return cleaned


class ExperimentForm(_DatasetForm):
    experiment = forms.ChoiceField(choices=[(k, k.replace("-", " ")) for k in KINDS])
    folds = forms.IntegerField(initial=5, min_value=2, max_value=20)
    field_order = ["experiment", "dataset", "encoder", "variant", "seed", "folds"]


class PretrainForm(forms.Form):
    corpus = forms.FileField(
        required=False,
        help_text="Optional: JSONL (a list of turns per line) or text (a turn per line, blank line between "
        "dialogues). Default: the packaged Chit-Chat corpus.",
    )
    epochs = forms.IntegerField(initial=1, min_value=1, max_value=50)
    resume = forms.BooleanField(
        required=False,
        help_text="Continue your latest VHRED checkpoint into a new one (models keep the one they were trained with).",
    )

    def clean_corpus(self):
        """Read the uploaded corpus as the run will: a file it cannot read is refused here, with its
        name and line, instead of starting a run that fails with a server path and a codec error."""
        upload = self.cleaned_data["corpus"]
        if not upload:
            return upload
        raw = b"".join(upload.chunks())
        upload.seek(0)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise forms.ValidationError(
                f"{upload.name} is not UTF-8 text (byte 0x{raw[error.start]:02x} at offset {error.start}); "
                "save it as UTF-8. Nothing was started."
            ) from error
        try:
            text_dialogues(text, name=upload.name, jsonl=upload.name.endswith((".jsonl", ".json")))
        except CorpusError as error:
            raise forms.ValidationError(f"{error}. Nothing was started.") from error
        return upload
