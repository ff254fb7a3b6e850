"""ADEM test correlations on the shared human-judgement data (../shared/data), next to the
published BLEU-4 / METEOR / ROUGE-L figures. Pure pipeline, no database:

    .venv/bin/python bench/adem_correlations.py --encoder minilm --folds 5 [--variant full] [--seed 0]
        [--precision auto|float32|bfloat16|int8|int8-torch]
"""

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scoring.adem.cache import VectorCache
from scoring.adem.encoders import get_encoder
from scoring.adem.encoders.minilm import MiniLmEncoder
from scoring.adem.pipeline import encode_examples, train_and_evaluate
from scoring.adem.training import TrainConfig
from tests.scoring.adem_helpers import examples_from_records
from tests.shared_loaders import grade, usr_personachat

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
PUBLISHED = {  # Pearson / Spearman from ../shared/data/README.md (Yeh et al. 2021)
    "usr-personachat": {"BLEU-4": (0.135, 0.090), "METEOR": (0.253, 0.271), "ROUGE-L": (0.066, 0.038)},
    "grade-dailydialog": {"BLEU-4": (0.075, 0.184), "METEOR": (0.096, 0.010), "ROUGE-L": (0.154, 0.147)},
    "grade-empatheticdialogues": {"BLEU-4": (-0.051, 0.002), "METEOR": (0.118, 0.055), "ROUGE-L": (0.029, -0.013)},
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--encoder", default="minilm")
    parser.add_argument("--variant", default="full")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--debias-length", action="store_true")
    parser.add_argument("--vhred-checkpoint", default=None)
    parser.add_argument("--cache", default="var/adem/vectors.sqlite")
    parser.add_argument("--precision", default="auto", choices=MiniLmEncoder.PRECISIONS, help="minilm only")
    args = parser.parse_args()
    if args.encoder == "minilm":
        encoder = MiniLmEncoder(precision=args.precision)
    else:
        encoder = get_encoder(args.encoder, vhred_checkpoint=args.vhred_checkpoint)
    cache = VectorCache(args.cache)
    sets = {
        "usr-personachat": usr_personachat(SHARED, include_ground_truth=False),
        "grade-dailydialog": grade(SHARED, "dailydialog"),
        "grade-empatheticdialogues": grade(SHARED, "empatheticdialogues"),
    }
    out = {}
    for name, records in sets.items():
        examples = examples_from_records(*records)
        started = time.perf_counter()
        vectors = encode_examples(examples, encoder, cache=cache)
        config = TrainConfig(variant=args.variant, debias_length=args.debias_length)
        _, results = train_and_evaluate(
            examples, vectors, config, seed=args.seed, encoder=(args.encoder, encoder.id), folds=args.folds or None
        )
        test = results["test"]
        out[name] = {"test": test, "seconds": round(time.perf_counter() - started, 1)}
        print(
            f"{name}: ADEM ({encoder.id}, {args.variant}, "
            f"{f'{args.folds}-fold pooled' if args.folds else '70/15/15 split'}, seed {args.seed}) "
            f"Pearson {test['pearson']:.3f} (p={test['pearson_p']:.2g}) Spearman {test['spearman']:.3f} "
            f"(p={test['spearman_p']:.2g}) n={test['n']}  |  "
            + "  ".join(f"{m} {p:.3f}/{s:.3f}" for m, (p, s) in PUBLISHED[name].items()),
            flush=True,
        )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
