"""Registry of trained ADEM models and the runs (training, pre-training, experiments) behind them."""

from pathlib import PurePath

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models

from annotation.models import Dataset

model_name_validator = RegexValidator(
    r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$",
    "Use letters, digits, '.', '_' and '-' (it names a file and a URL), starting with a letter or digit.",
)


ADEM_METRIC_PREFIX = "adem:"
LEARNED_METRIC_PREFIX = "learned:"


def metric_name_of(kind, name):
    """`adem:<name>` for an ADEM model, `learned:<name>` for any other evaluator kind."""
    return (ADEM_METRIC_PREFIX if kind == "adem" else LEARNED_METRIC_PREFIX) + name


class AdemModel(models.Model):
    """A trained ADEM: what it was trained on and how, where its checkpoint is, how well it did.

    Scoring reads the checkpoint, whose sha256 is kept here so a replaced file is noticed;
    `adem:<name>` metric scores carry that hash as their version.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Training"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    class Encoder(models.TextChoices):
        VHRED = "vhred", "VHRED (pre-trained hierarchical encoder)"
        MINILM = "minilm", "all-MiniLM-L6-v2"
        GLOVE = "glove", "Averaged GloVe"

    class Precision(models.TextChoices):
        # MiniLM only. int8 vectors are not float32's: a model scores with the precision it was
        # trained with (the encoder id in its checkpoint is checked when scoring).
        STANDARD = "standard", "Standard (float32; bfloat16 where the hardware multiplies it)"
        INT8 = "int8", "int8 via ONNX Runtime (MiniLM only; ~1.5x faster on a CPU, vectors ~0.99 cosine)"

    class Kind(models.TextChoices):
        # Learned evaluators beside ADEM (issue 41, scoring.learned): one registry, one ownership,
        # one scoring API; their scores are the metric `learned:<name>` instead of `adem:<name>`.
        ADEM = "adem", "ADEM (Lowe et al. 2017)"
        CROSS_ENCODER = "cross-encoder", "Cross-encoder (MiniLM fine-tuned on these ratings)"
        STACKED = "stacked", "Stacked (ridge over the dataset's metric scores, lengths and reference-free features)"

    class Variant(models.TextChoices):
        FULL = "full", "ADEM (context and reference)"
        CONTEXT = "context", "C-ADEM (context only)"
        REFERENCE = "reference", "R-ADEM (reference only)"

    # Unique per owner, not site-wide: a refusal must not tell one researcher another's model names.
    name = models.CharField(max_length=100, validators=[model_name_validator])
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="adem_models")
    dataset = models.ForeignKey(Dataset, null=True, blank=True, on_delete=models.SET_NULL, related_name="adem_models")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.ADEM)
    encoder = models.CharField(max_length=10, choices=Encoder.choices, default=Encoder.MINILM)
    precision = models.CharField(max_length=10, choices=Precision.choices, default=Precision.STANDARD)
    variant = models.CharField(max_length=10, choices=Variant.choices, default=Variant.FULL)
    seed = models.IntegerField(default=0)
    folds = models.PositiveIntegerField(null=True, blank=True)
    config = models.JSONField(default=dict, blank=True, help_text="Training hyper-parameters.")
    training_data = models.JSONField(
        default=dict, blank=True, help_text="Dataset, surveys, aspect and exclusions used; counts of responses."
    )
    results = models.JSONField(default=dict, blank=True, help_text="Test correlations, system level, learning curve.")
    checkpoint_path = models.CharField(max_length=500, blank=True)
    checkpoint_sha256 = models.CharField(max_length=64, blank=True)
    vhred_sha256 = models.CharField(
        max_length=64,
        blank=True,
        help_text="VHRED encoder checkpoint (content hash) the model was trained with; blank: not VHRED, "
        "or trained before checkpoints were content-addressed (then the legacy vhred.ckpt).",
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "ADEM model"
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="ademmodel_unique_name_per_owner")]

    def __str__(self):
        return self.name

    @property
    def metric_name(self):
        return metric_name_of(self.kind, self.name)

    @property
    def is_learned(self):
        """A learned evaluator of scoring.learned (not the paper's ADEM)."""
        return self.kind != self.Kind.ADEM

    @property
    def checkpoint_file_name(self):
        """The checkpoint's file name alone: pages never show where the server keeps its files."""
        return PurePath(self.checkpoint_path).name if self.checkpoint_path else ""


class TrainingRun(models.Model):
    """One background job with live progress: ADEM training, VHRED pre-training or an experiment.

    `progress` grows one point per epoch (`{"epoch", "train_loss", "val_pearson"}`), which the
    progress page polls and the learning-curve plot draws.
    """

    class Kind(models.TextChoices):
        TRAIN = "train", "Train ADEM"
        TRAIN_LEARNED = "train-learned", "Train a learned evaluator"
        PRETRAIN = "pretrain", "Pre-train VHRED"
        EXPERIMENT = "experiment", "Experiment"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="adem_runs"
    )
    adem_model = models.ForeignKey(AdemModel, null=True, blank=True, on_delete=models.CASCADE, related_name="runs")
    dataset = models.ForeignKey(Dataset, null=True, blank=True, on_delete=models.SET_NULL, related_name="adem_runs")
    params = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    progress = models.JSONField(default=list, blank=True)
    phase = models.JSONField(
        default=dict,
        blank=True,
        help_text="What the run does before and between epochs (loading the encoder, encoding n of m "
        "texts, training): the progress page shows it while no epoch is recorded yet.",
    )
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    attempts = models.PositiveIntegerField(default=0, help_text="Times a worker started this run.")
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="Last sign of life of the worker running it (see RUN_STALL_SECONDS)."
    )
    worker = models.CharField(
        max_length=255,
        blank=True,
        help_text="The process that started it last (machine, pid): its redelivered task takes over once it has ended.",
    )

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "ADEM run"

    def __str__(self):
        return f"{self.kind} run {self.pk} ({self.status})"


class ApiToken(models.Model):
    """A bearer token for the ADEM scoring endpoint (scripts cannot carry a session and CSRF token).

    Only the sha256 of the key is stored; the key is shown once, when created.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True)
    key_sha256 = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API token"

    def __str__(self):
        return f"token {self.name or self.pk} of {self.user}"
