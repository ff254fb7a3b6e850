"""Time dataset and ratings import (and export) on generated files.

    .venv/bin/python bench/bench_import.py --responses 50000 --ratings 200000

Uses the database in DATABASE_URL (default: a throw-away SQLite file under bench/out/) and
prints rows per second for each step.
"""

import argparse
import io
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--responses", type=int, default=50_000)
    parser.add_argument("--ratings", type=int, default=200_000)
    parser.add_argument("--systems", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    db_file = out / "bench_import.sqlite3"
    if "DATABASE_URL" not in os.environ:
        db_file.unlink(missing_ok=True)
        os.environ["DATABASE_URL"] = f"sqlite:///{db_file}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from annotation.kinds.rating.exporting import ratings_export
    from annotation.models import Dataset
    from annotation.services import dataset_import, ratings_import
    from annotation.services.exporting import dataset_export

    call_command("migrate", verbosity=0)
    name = f"bench-{int(time.time())}"
    dataset_file, ratings_file = _generate(args, out)
    print(
        f"database: {django.db.connection.vendor}; files: {dataset_file.stat().st_size / 1e6:.1f} MB, "
        f"{ratings_file.stat().st_size / 1e6:.1f} MB"
    )

    start = time.perf_counter()
    dataset = dataset_import(file=dataset_file, name=name)
    elapsed = time.perf_counter() - start
    print(f"import_dataset: {args.responses} responses in {elapsed:.2f} s ({args.responses / elapsed:,.0f}/s)")

    start = time.perf_counter()
    survey = ratings_import(file=ratings_file, dataset=dataset, survey_name=f"{name}-ratings")
    elapsed = time.perf_counter() - start
    n = survey.ratings.count()
    print(f"import_ratings: {n} ratings in {elapsed:.2f} s ({n / elapsed:,.0f}/s)")

    start = time.perf_counter()
    dataset_export(dataset=dataset, stream=io.StringIO())
    ratings_export(dataset=dataset, survey=survey, stream=io.StringIO())
    print(f"export dataset + ratings: {time.perf_counter() - start:.2f} s")
    Dataset.objects.filter(pk=dataset.pk).delete()


def _generate(args, out):
    rng = random.Random(args.seed)
    systems = [f"sys{i}" for i in range(args.systems)]
    n_contexts = max(1, args.responses // len(systems))
    words = "the a cat dog went home today why not sure maybe later good idea tell me more".split()  # noqa: SIM905
    dataset_file = out / "bench_dataset.jsonl"
    with dataset_file.open("w", encoding="utf-8") as f:
        for c in range(n_contexts):
            record = {
                "context_id": f"c{c}",
                "context": [" ".join(rng.choices(words, k=8)) for _ in range(rng.randint(1, 4))],
                "references": [" ".join(rng.choices(words, k=10))],
                "responses": [{"system": s, "text": " ".join(rng.choices(words, k=9))} for s in systems],
            }
            f.write(json.dumps(record) + "\n")
    pairs = [(c, s) for c in range(n_contexts) for s in systems]
    per_item = max(1, -(-args.ratings // len(pairs)))
    ratings_file = out / "bench_ratings.jsonl"
    written = 0
    with ratings_file.open("w", encoding="utf-8") as f:
        for k in range(per_item):
            for c, s in pairs:
                if written >= args.ratings:
                    break
                record = {"context_id": f"c{c}", "system": s, "worker": f"w{k}-{c % 50}", "score": rng.randint(1, 5)}
                f.write(json.dumps(record) + "\n")
                written += 1
    return dataset_file, ratings_file


if __name__ == "__main__":
    main()
