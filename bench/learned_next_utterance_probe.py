"""Does next-utterance prediction learned from Chit-Chat carry over to the shared sets' ratings?

A diagnosis for issue 41's GRADE gap (docs/performance.md, "Learned evaluators"), not a product
path: the cross-encoder kind is fine-tuned on Chit-Chat windows, each context's true next turn
scored 1 and `--negatives` turns of other windows scored 0 (the next-utterance heads' sampling,
`reference_free.next_utterance`), without references and without any rating. It then scores every
response of the shared sets zero-shot, and the script prints the validation correlation on held-out
windows (does it learn the task?) and the Spearman / Pearson with the human scores (does the task
predict them?).

    .venv/bin/python bench/learned_next_utterance_probe.py [--windows 2000] [--epochs 2] [--threads 2]

Measured 2026-11-30 on the Xeon: 2,000 windows (6,000 pairs) 200 s, validation r 0.43, Spearman
USR 0.005, GRADE-DD 0.042, GRADE-ED 0.198; 6,000 windows 557 s, 0.49, 0.028 / 0.007 / 0.158.
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scipy import stats

from bench.bench_learned import SETS
from scoring.adem.vhred.corpus import chitchat_dialogues
from scoring.learned import kinds
from scoring.learned.data import Rated, Response, rated_from
from scoring.learned.reference_free import next_utterance
from tests.scoring.adem_helpers import examples_from_records

HELD_OUT_WINDOWS = 300


def labelled_pairs(windows, negatives, seed):
    """(training rows, validation rows): per window its true turn (1.0) and `negatives` others (0.0)."""
    pairs = next_utterance.sample_windows(chitchat_dialogues(), windows=windows + HELD_OUT_WINDOWS, seed=seed)
    partners = next_utterance.negative_partners(len(pairs), negatives=negatives, seed=seed)
    train, val = [], []
    for j, (context, turn) in enumerate(pairs):
        side = train if j < windows else val
        candidates = [(turn, 1.0)] + [(pairs[p[j]][1], 0.0) for p in partners]
        for response, label in candidates:
            side.append(Rated(context=tuple(context), response=response, score=label, context_id=f"w{j}"))
    return train, val


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--windows", type=int, default=2000)
    parser.add_argument("--negatives", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    train, val = labelled_pairs(args.windows, args.negatives, args.seed)
    model = kinds.get("cross-encoder").new({"threads": args.threads, "use_reference": False, "max_epochs": args.epochs})
    started = time.perf_counter()

    def progress(epoch, loss, val_pearson):
        print(f"epoch {epoch}: loss {loss:.3f}, validation r {val_pearson:.3f} ({time.perf_counter() - started:.0f} s)")

    model.fit(train, val, seed=args.seed, progress=progress)
    print(f"fine-tuned on {len(train)} pairs in {time.perf_counter() - started:.0f} s")
    for name, load in SETS.items():
        rated = [rated_from(e) for e in examples_from_records(*load())]
        predicted = model.predict([Response(context=r.context, response=r.response) for r in rated])
        human = [r.score for r in rated]
        print(
            f"{name}: zero-shot Spearman {stats.spearmanr(predicted, human)[0]:.3f}, "
            f"Pearson {stats.pearsonr(predicted, human)[0]:.3f} (n={len(rated)})"
        )


if __name__ == "__main__":
    main()
