"""Learned evaluators (issue 41) against ADEM on the shared human-judgement sets: pooled 5-fold
out-of-fold Spearman / Pearson per kind, training wall time, and the time to score new responses.

    nice -n 19 .venv/bin/python bench/bench_learned.py [--sets usr-personachat,...] [--kinds adem,stacked,cross-encoder]
        [--folds 5] [--seed 0] [--score-size 10000] [--score-per-context 1] [--fit-size 3000] [--threads 1]
        [--out var/learned/bench.json]

Every kind is trained with ADEM's context-disjoint folds (same seed, same folds), so the figures
are over the same responses, each predicted by a model that never saw its context. The stacked
model's features are the metric engine's scores (bench/learned_features.py), computed once per set
and cached under var/learned/, and (unless `--config '{"stacked": {"reference_free": false}}'`)
the reference-free features the kind computes from the texts itself. Scoring time is measured on
`--score-size` responses built from the packaged Chit-Chat corpus (context: three turns,
reference: the next one, response: a turn of another dialogue): the cost of a forward pass does
not depend on the weights, so the first fold's network serves; the stacked kind's scoring includes
computing the new responses' reference-free features (three MiniLM texts a response), which is
most of its cost. With `--score-per-context K` the new responses come K to a context, as a
study's do (each context and last turn is then encoded once for K responses); 1, the default, is
the worst case of every text distinct. `--fit-size` times each kind's folds (not ADEM's) on that
many Chit-Chat responses, 5 to a context. `--threads` is the torch threads of the cross-encoder
(unless `--config` sets them) and of the reference-free features' encoding
(RATELAB_LEARNED_THREADS); 1 by default, 2 for a timed run on the quiet 2-core machine. Every
time is given in wall and CPU seconds (all threads of the process) with the machine's load average
before and after: the benchmark machine is shared, and figures taken under contention are slower
than a quiet host's.
"""

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.learned_features import metric_features
from scoring.adem.cache import VectorCache
from scoring.adem.encoders.minilm import MiniLmEncoder
from scoring.adem.pipeline import encode_examples, train_and_evaluate
from scoring.adem.training import TrainConfig
from scoring.learned import kinds
from scoring.learned.crossfit import Step, cross_validate
from scoring.learned.data import Response, rated_from
from scoring.learned.determinism import THREADS_VARIABLE
from tests.scoring.adem_helpers import examples_from_records
from tests.shared_loaders import grade, usr_personachat

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
SETS = {
    "usr-personachat": lambda: usr_personachat(SHARED, include_ground_truth=False),
    "grade-dailydialog": lambda: grade(SHARED, "dailydialog"),
    "grade-empatheticdialogues": lambda: grade(SHARED, "empatheticdialogues"),
}
BEST_PUBLISHED = {  # turn-level Spearman, Yeh et al. 2021 (issue 41)
    "usr-personachat": ("USL-H", 0.523),
    "grade-dailydialog": ("DEB", 0.363),
    "grade-empatheticdialogues": ("DEB", 0.395),
}


def load_average():
    return os.getloadavg()[0]


def cached_features(name, examples, folder):
    path = folder / f"features-{name}.json"
    if path.is_file():
        cached = json.loads(path.read_text())
        if len(cached) == len(examples):
            return cached
    features = metric_features(examples)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(features))
    return features


def run_adem(examples, *, folds, seed, cache):
    encoder = MiniLmEncoder()
    started = time.perf_counter()
    vectors = encode_examples(examples, encoder, cache=cache)
    _, results = train_and_evaluate(
        examples, vectors, TrainConfig(), seed=seed, encoder=("minilm", encoder.id), folds=folds
    )
    return {"test": results["test"], "train_seconds": round(time.perf_counter() - started, 1)}


def run_kind(kind, rated, *, folds, seed, verbose, config=None):
    def progress(step: Step):
        if verbose:
            where = f"fold {step.fold + 1}/{step.folds}" if step.fold is not None else "final"
            print(
                f"    {kind} {where} epoch {step.epoch}: loss {step.train_loss:.3f}, val r {step.val_pearson:.3f}",
                flush=True,
            )

    load_before = load_average()
    _, results = cross_validate(kind, rated, folds=folds, seed=seed, config=config, progress=progress, refit=False)
    epochs = sum(len(curve) for curve in results["curves"])
    trained = sum(f["train_n"] * len(c) for f, c in zip(results["folds"], results["curves"], strict=True))
    return {
        "test": results["test"],
        "train_seconds": results["seconds"]["folds"],
        "epochs_run": epochs,
        "best_epochs": [f["best_epoch"] for f in results["folds"]],
        "train_examples_per_second": round(trained / max(results["seconds"]["folds"], 1e-9), 1),
        "load_average": [round(load_before, 2), round(load_average(), 2)],
        "out_of_fold": [round(p["predicted"], 6) for p in results["predictions"]],
    }


def scoring_time(kind, rated, size, seed, *, per_context=1, config=None):
    """Seconds to score `size` new responses with an evaluator of `kind` fitted quickly on `rated`."""
    from bench.bench_adem import triples_from_corpus
    from scoring.adem.vhred.corpus import chitchat_dialogues

    triples = triples_from_corpus(chitchat_dialogues(), size, seed=seed, per_context=per_context)
    responses = [Response(context=tuple(c), reference=r, response=h) for c, r, h in triples]
    config = {**(config or {}), **({"max_epochs": 1} if kind == "cross-encoder" else {})}
    evaluator = kinds.get(kind).new({**kinds.get(kind).default_config(), **config})
    if kind == "cross-encoder":
        evaluator.fit(rated[:32], rated[32:64], seed=seed)
    else:
        evaluator.fit(rated, rated[:40], seed=seed)
        responses = [
            Response(context=r.context, response=r.response, features=rated[i % len(rated)].features)
            for i, r in enumerate(responses)
        ]
    load_before = load_average()
    started, cpu_started = time.perf_counter(), time.process_time()
    scores = evaluator.predict(responses)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    assert len(scores) == size
    # CPU seconds of this process: on one thread, about the wall time a quiet core would take.
    return {
        "n": size,
        "per_context": per_context,
        "seconds": round(seconds, 1),
        "cpu_seconds": round(cpu_seconds, 1),
        "load_average": [round(load_before, 2), round(load_average(), 2)],
    }


def training_time(kind, size, *, folds, seed, config=None):
    """Wall and CPU seconds of `folds`-fold cross-validation of `kind` on `size` rated responses
    built from the Chit-Chat corpus (5 per context, as a study has them; scores drawn at random:
    the cost does not depend on them). The sentence-vector memo starts empty, so the reference-free
    features' encoding is counted in."""
    from bench.bench_adem import triples_from_corpus
    from scoring.adem.vhred.corpus import chitchat_dialogues
    from scoring.learned.data import Rated
    from scoring.learned.reference_free import next_utterance, semantic

    next_utterance.heads()  # trained once per machine and cached: not part of a model's training
    semantic.forget()
    rng = random.Random(seed)
    triples = triples_from_corpus(chitchat_dialogues(), size, seed=seed, per_context=5)
    rated = [
        Rated(
            context=tuple(c),
            reference=r,
            response=h,
            features={"length:response_words": float(len(h.split()))},
            score=float(rng.randint(1, 5)),
            context_id=f"c{i // 5}",
            system=f"s{i % 5}",
            response_id=i,
        )
        for i, (c, r, h) in enumerate(triples)
    ]
    load_before = load_average()
    started, cpu_started = time.perf_counter(), time.process_time()
    _, results = cross_validate(kind, rated, folds=folds, seed=seed, config=config, refit=False)
    return {
        "n": size,
        "folds": folds,
        "seconds": round(time.perf_counter() - started, 1),
        "cpu_seconds": round(time.process_time() - cpu_started, 1),
        "load_average": [round(load_before, 2), round(load_average(), 2)],
        "epochs_run": [len(curve) for curve in results["curves"]],
    }


def _figure(test):
    return f"Spearman {test['spearman']:.3f} Pearson {test['pearson']:.3f} (n={test['n']})"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--kinds", default="adem,stacked,cross-encoder")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--score-size", type=int, default=10_000)
    parser.add_argument("--score-per-context", type=int, default=1, help="New responses sharing one context.")
    parser.add_argument(
        "--threads", type=int, default=1, help="torch threads (cross-encoder, reference-free encoding)."
    )
    parser.add_argument("--cache", default="var/learned")
    parser.add_argument("--out", default="var/learned/bench.json")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--config", default="{}", help='JSON settings per kind, e.g. {"cross-encoder": {"lr": 1e-4}}')
    parser.add_argument("--score-only", action="store_true", help="Skip the cross-validation; time scoring only.")
    parser.add_argument(
        "--fit-size", type=int, default=0, help="Also time each kind's k folds on this many Chit-Chat responses."
    )
    args = parser.parse_args()
    os.environ[THREADS_VARIABLE] = str(args.threads)
    configs = json.loads(args.config)
    configs["cross-encoder"] = {"threads": args.threads, **configs.get("cross-encoder", {})}
    folder = Path(args.cache)
    wanted = args.kinds.split(",")
    out = {"cores": os.cpu_count(), "threads": args.threads, "sets": {}, "scoring": {}, "training": {}}
    for kind in (k for k in wanted if args.fit_size and k != "adem"):
        out["training"][kind] = training_time(
            kind, args.fit_size, folds=args.folds, seed=args.seed, config=configs.get(kind)
        )
        print(f"{kind}, {args.folds} folds on {args.fit_size} responses: {out['training'][kind]}", flush=True)
    rated_for_scoring = None
    for name in args.sets.split(","):
        examples = examples_from_records(*SETS[name]())
        features = cached_features(name, examples, folder)
        rated = [rated_from(e, f) for e, f in zip(examples, features, strict=True)]
        rated_for_scoring = rated_for_scoring or rated
        figures = out["sets"][name] = {"n": len(rated), "best_published": BEST_PUBLISHED[name]}
        print(f"{name}: {len(rated)} rated responses, best published {BEST_PUBLISHED[name]}", flush=True)
        for kind in [] if args.score_only else wanted:
            if kind == "adem":
                figures[kind] = run_adem(
                    examples, folds=args.folds, seed=args.seed, cache=VectorCache(folder / "vectors.sqlite")
                )
            else:
                figures[kind] = run_kind(
                    kind,
                    rated,
                    folds=args.folds,
                    seed=args.seed,
                    verbose=not args.quiet,
                    config=configs.get(kind),
                )
            print(
                f"  {kind}: {_figure(figures[kind]['test'])}, {figures[kind]['train_seconds']} s to train "
                f"(load {load_average():.2f})",
                flush=True,
            )
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps(out, indent=1))
    if args.score_size:
        for kind in (k for k in wanted if k != "adem"):
            out["scoring"][kind] = scoring_time(
                kind,
                rated_for_scoring,
                args.score_size,
                args.seed,
                per_context=args.score_per_context,
                config=configs.get(kind),
            )
            print(f"scoring {args.score_size} new responses with {kind}: {out['scoring'][kind]}", flush=True)
    Path(args.out).write_text(json.dumps(out, indent=1))
    print(
        json.dumps(
            {
                name: {k: v.get("test") if isinstance(v, dict) else v for k, v in figures.items()}
                for name, figures in out["sets"].items()
            }
        )
    )


if __name__ == "__main__":
    main()
