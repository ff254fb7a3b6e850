"""How the dataset page shows the scores later layers attach to a response (pure, no Django).

The extras arrive as `{"metrics": {name: value}, ...}` (see `annotation.services.extensions.points`). A response
row shows a few chosen scores, rounded, under human labels; every score is listed behind a
toggle. Never a raw dict.
"""

import math

# The headline scores, in this order, when present; then every ADEM model's score.
CHOSEN = ("bleu4", "meteor", "rouge_l")
LABELS = {
    "bleu1": "BLEU-1",
    "bleu2": "BLEU-2",
    "bleu3": "BLEU-3",
    "bleu4": "BLEU-4",
    "bleu4_smooth1": "BLEU-4 (smoothing 1)",
    "bleu4_smooth2": "BLEU-4 (smoothing 2)",
    "bleu4_smooth3": "BLEU-4 (smoothing 3)",
    "meteor": "METEOR",
    "meteor_nltk": "METEOR (NLTK)",
    "rouge_l": "ROUGE-L",
    "cider": "CIDEr",
    "bertscore_f1": "BERTScore F1",
    "embedding_average": "Embedding average",
    "greedy_matching": "Greedy matching",
    "vector_extrema": "Vector extrema",
    "sentence_cosine": "Sentence cosine",
    "length_diff": "Length difference",
    "reference_len": "Reference length",
    "response_len": "Response length",
}
ADEM_PREFIX = "adem:"
LEARNED_PREFIX = "learned:"
JUDGE_PREFIX = "judge:"
NOSTOP_SUFFIX = "_nostop"
DECIMALS = 3


def score_label(name):
    """'bleu4' -> 'BLEU-4', 'rouge_l_nostop' -> 'ROUGE-L (no stopwords)', 'adem:demo' -> 'ADEM demo'."""
    if name.startswith(ADEM_PREFIX):
        return f"ADEM {name.removeprefix(ADEM_PREFIX)}"
    if name.startswith(LEARNED_PREFIX):
        return f"Learned {name.removeprefix(LEARNED_PREFIX)}"
    if name.startswith(JUDGE_PREFIX):
        return f"Judge {name.removeprefix(JUDGE_PREFIX)}"
    if name.endswith(NOSTOP_SUFFIX):
        return f"{score_label(name.removesuffix(NOSTOP_SUFFIX))} (no stopwords)"
    return LABELS.get(name, name.replace("_", " ").capitalize())


def score_text(value):
    """A rounded number as text; '–' for a missing or non-finite value (never 8.06e-17)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "–" if value is None else str(value)
    if not math.isfinite(value):
        return "–"
    text = f"{value:.{DECIMALS}f}"
    return "0.000" if text == "-0.000" else text


def score_display(extras):
    """`{"chosen": [(label, text)], "all": [(label, text)]}` for one response's extras."""
    metrics = dict(extras.get("metrics") or {})
    others = {key: value for key, value in extras.items() if key != "metrics"}
    chosen_names = [name for name in CHOSEN if name in metrics]
    chosen_names += sorted(name for name in metrics if name.startswith(ADEM_PREFIX))
    every = sorted(metrics, key=lambda name: score_label(name).lower())
    return {
        "chosen": [(score_label(name), score_text(metrics[name])) for name in chosen_names],
        "all": [(score_label(name), score_text(metrics[name])) for name in every]
        + [(str(key), score_text(value)) for key, value in sorted(others.items())],
    }
