"""ADEM benchmark: encode + score triples (MiniLM, then from cached vectors), fit ADEM on rated
responses, VHRED pre-training throughput. Targets (issue 7, 2-core CPU): 10,000 triples < 60 s
with MiniLM, far less cached; fitting on 3,000 responses < 30 s.

    .venv/bin/python bench/bench_adem.py --size 10000 --fit-size 3000 --vhred-steps 20 [--json]
        [--precision auto|float32|bfloat16|int8|int8-torch] [--responses-per-context K]

Triples come from the packaged Chit-Chat corpus (context: three turns; reference: the next
turn; response: a turn of another dialogue), so every text is distinct and nothing is cached
by accident. By default (the issue's figure) every triple has a context of its own: 10,000
contexts, 10,000 references and 10,000 responses to encode. `--responses-per-context K` is the
shape of a real study (USR: 5 responses per context), labelled "study" in the output: size/K
contexts, each with one reference and K responses, all texts still distinct; the pipeline
encodes each context and reference once. Fit scores are synthetic (similarity plus noise, 1-5)
and the fit set is GloVe-encoded: the fit's cost depends on neither once vectors are
PCA-reduced.
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scoring.adem.cache import VectorCache
from scoring.adem.encoders.glove import GloveEncoder
from scoring.adem.encoders.minilm import MiniLmEncoder
from scoring.adem.pipeline import Example, encode_examples, train_and_evaluate
from scoring.adem.training import TrainConfig
from scoring.adem.vhred.corpus import chitchat_dialogues
from scoring.adem.vhred.model import VhredConfig
from scoring.adem.vhred.pretrain import default_device, pretrain


def triples_from_corpus(dialogues, size, seed=0, per_context=1):
    """`size` triples; with `per_context` > 1, groups of that many responses share a context."""
    rng = np.random.default_rng(seed)
    windows = [(d, i) for d in dialogues for i in range(3, len(d))]
    n_contexts = -(-size // per_context)
    chosen = rng.choice(len(windows), size=n_contexts, replace=len(windows) < n_contexts)
    out = []
    for j, k in enumerate(chosen):
        dialogue, i = windows[k]
        for _ in range(per_context):
            n = len(out)
            if n == size:
                break
            other = dialogues[rng.integers(len(dialogues))]
            # A running number keeps every text distinct even when a window repeats.
            out.append((dialogue[i - 3 : i], f"{dialogue[i]} ({j})", f"{other[rng.integers(len(other))]} [{n}]"))
    return out


def _distinct_texts(triples):
    contexts, references, responses = zip(*triples, strict=True)
    return {
        "contexts": len({tuple(c) for c in contexts}),
        "references": len(set(references)),
        "responses": len(set(responses)),
    }


def _rated(triples):
    return [
        Example(context=c, reference=r, response=h, score=0.0, context_id=f"c{i // 3}", system=f"s{i % 3}")
        for i, (c, r, h) in enumerate(triples)
    ]


def _synthetic_scores(examples, vectors, seed=0):
    """1-5 scores loosely following similarity, so the fit has something to learn."""
    rng = np.random.default_rng(seed)
    similarity = (vectors.r * vectors.rh).sum(1) + (vectors.c * vectors.rh).sum(1)
    z = (similarity - similarity.mean()) / (similarity.std() + 1e-9)
    for example, score in zip(examples, np.clip(np.rint(3 + 2 * z + rng.normal(0, 1, len(z))), 1, 5), strict=True):
        example.score = float(score)


def _compare_precisions(scorer, triples, fast):
    """float32 against the encoder's faster precision on the same triples: speed and agreement.

    `scorer` was trained on `fast` vectors; an int8 encoder has its own id, so the float32 run
    borrows that id to score with the same model (only the vectors' agreement is in question).
    """
    figures = {"compare_triples": len(triples), "compare_precision": fast}
    vectors, scores = {}, {}
    for precision in ("float32", fast):
        encoder = MiniLmEncoder(precision=precision)
        encoder.id = scorer.encoder_id
        started = time.perf_counter()
        scores[precision] = scorer.score(triples, encoder)
        figures[f"compare_{precision}_seconds"] = time.perf_counter() - started
        vectors[precision] = encoder.encode_texts([response for _, _, response in triples[:200]])
    figures["compare_min_cosine"] = float((vectors["float32"] * vectors[fast]).sum(1).min())
    figures["compare_mean_cosine"] = float((vectors["float32"] * vectors[fast]).sum(1).mean())
    figures["compare_score_pearson"] = float(np.corrcoef(scores["float32"], scores[fast])[0, 1])
    figures["compare_score_max_abs_diff"] = float(np.abs(np.subtract(scores["float32"], scores[fast])).max())
    return figures


def _note(text):
    print(text, file=sys.stderr, flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000, help="triples to encode and score")
    parser.add_argument("--fit-size", type=int, default=3_000, help="rated responses to fit ADEM on")
    parser.add_argument("--vhred-steps", type=int, default=20)
    parser.add_argument(
        "--compare-size", type=int, default=1_000, help="triples scored in float32 too, to compare (0: skip)"
    )
    parser.add_argument("--precision", default="auto", choices=MiniLmEncoder.PRECISIONS)
    parser.add_argument(
        "--responses-per-context",
        type=int,
        default=1,
        help="1 (default, the issue's figure): every triple its own context; K: K responses per context",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = {"threads": torch.get_num_threads(), "device": default_device()}
    per_context = args.responses_per_context
    figures["mode"] = "distinct contexts" if per_context == 1 else f"study, {per_context} responses per context"
    dialogues = chitchat_dialogues()
    encoder = MiniLmEncoder(precision=args.precision)
    encoder.encode_texts(["warm up"])  # model load is a one-off, not per triple
    figures["precision"] = encoder.precision

    with tempfile.TemporaryDirectory() as tmp:
        cache = VectorCache(Path(tmp) / "vectors.sqlite")
        # Fitting: the fit set is encoded with GloVe (seconds), because the fit's cost does not
        # depend on the encoder once vectors are PCA-reduced to 50 dimensions.
        examples = _rated(triples_from_corpus(dialogues, args.fit_size, seed=1))
        vectors = encode_examples(examples, GloveEncoder(), cache=cache)
        _synthetic_scores(examples, vectors)
        started = time.perf_counter()
        _, results = train_and_evaluate(examples, vectors, TrainConfig(), seed=0, encoder=("glove", GloveEncoder.id))
        figures["fit_seconds"] = time.perf_counter() - started
        figures["fit_responses"] = len(examples)
        figures["fit_epochs"] = len(results["curve"])
        _note(f"fitted ADEM on {len(examples)} responses in {figures['fit_seconds']:.1f} s")

        # A MiniLM scorer to score with, trained on a small separate set.
        examples = _rated(triples_from_corpus(dialogues, 300, seed=3))
        vectors = encode_examples(examples, encoder, cache=cache)
        _synthetic_scores(examples, vectors)
        scorer, _ = train_and_evaluate(examples, vectors, TrainConfig(), seed=0, encoder=("minilm", encoder.id))

        triples = triples_from_corpus(dialogues, args.size, seed=2, per_context=args.responses_per_context)
        figures["score_distinct_texts"] = _distinct_texts(triples)
        started = time.perf_counter()
        scorer.score(triples, encoder, cache=cache)
        figures["score_minilm_seconds"] = time.perf_counter() - started
        _note(f"encoded and scored {len(triples)} triples in {figures['score_minilm_seconds']:.1f} s")
        started = time.perf_counter()
        scorer.score(triples, encoder, cache=cache)
        figures["score_cached_seconds"] = time.perf_counter() - started
        figures["score_triples"] = len(triples)
        cache.close()

        if args.compare_size and encoder.precision != "float32":
            compare = triples_from_corpus(dialogues, args.compare_size, seed=4)
            figures.update(_compare_precisions(scorer, compare, encoder.precision))

        if args.vhred_steps:
            stats = pretrain(dialogues, Path(tmp) / "vhred.ckpt", config=VhredConfig(), max_steps=args.vhred_steps)
            figures["vhred_tokens_per_second"] = stats["tokens_per_second"]
            figures["vhred_steps"] = stats["steps"]
            figures["vhred_tokens"] = stats["tokens"]

    if args.json:
        print(json.dumps(figures, indent=2))
        return
    f = figures
    print(f"threads {f['threads']}, device {f['device']}, MiniLM precision {f['precision']}")
    texts = f["score_distinct_texts"]
    print(
        f"encode + score {f['score_triples']} triples with MiniLM ({f['mode']}: {texts['contexts']} contexts, "
        f"{texts['references']} references, {texts['responses']} responses): "
        f"{f['score_minilm_seconds']:.1f} s (target < 60 s)"
    )
    if "compare_triples" in f:
        fast = f["compare_precision"]
        print(
            f"  {f['compare_triples']} triples in float32 {f['compare_float32_seconds']:.1f} s, "
            f"{fast} {f[f'compare_{fast}_seconds']:.1f} s "
            f"({f['compare_float32_seconds'] / f[f'compare_{fast}_seconds']:.1f}x); vectors' cosine min "
            f"{f['compare_min_cosine']:.5f}, mean {f['compare_mean_cosine']:.5f}; ADEM scores Pearson "
            f"{f['compare_score_pearson']:.5f}, max |diff| {f['compare_score_max_abs_diff']:.4f}"
        )
    print(f"score the same triples from cached vectors: {f['score_cached_seconds']:.2f} s")
    print(
        f"fit ADEM on {f['fit_responses']} rated responses: {f['fit_seconds']:.1f} s, "
        f"{f['fit_epochs']} epochs (target < 30 s for 3,000)"
    )
    if args.vhred_steps:
        print(
            f"VHRED pre-training: {f['vhred_tokens_per_second']:.0f} tokens/s, {f['vhred_steps']} steps, {f['device']}"
        )


if __name__ == "__main__":
    main()
