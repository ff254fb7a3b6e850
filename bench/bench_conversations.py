"""Time a conversation study's import and its reference-free conversation metrics (issue 37's scale).

    .venv/bin/python bench/bench_conversations.py                      # 6,500 x ~25 turns, 11 systems
    .venv/bin/python bench/bench_conversations.py --minilm 500         # also MiniLM coherence on 500 of them

Generates a conversations file (JSONL), one overall rating per conversation and `--turn-ratings`
per-turn ratings on system turns, then times: importing the conversations (parse, check, write),
importing the ratings, exporting the conversations, and the reference-free metrics on every
conversation as read back from the database, then computing and storing them as
`compute_conversation_metrics` does, and building the report (its Conversations section: means,
clusters, flags, agreement, metric correlations, 1,000 bootstrap resamples). Uses DATABASE_URL
(default: a throw-away SQLite file under bench/out/). Targets (issue 37): import < 30 s, metrics
< 30 s, report < 15 s.
"""

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

VOCABULARY = (
    "the a cat dog went home today why not sure maybe later good idea tell me more about your weekend "
    "i like music movies books travel food do you have any pets what is favourite really that sounds fun"
)
WORDS = VOCABULARY.split()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=6500)
    parser.add_argument("--systems", type=int, default=11)
    parser.add_argument("--turns", type=int, default=25, help="Mean turns per conversation (20 to 30 drawn).")
    parser.add_argument("--turn-ratings", type=int, default=20_000)
    parser.add_argument("--minilm", type=int, default=0, help="Also time MiniLM coherence on this many conversations.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bootstrap", type=int, default=1000, help="Report bootstrap resamples.")
    parser.add_argument("--profile", action="store_true", help="Print the report build's profile.")
    args = parser.parse_args()

    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    db_file = out / "bench_conversations.sqlite3"
    if "DATABASE_URL" not in os.environ:
        db_file.unlink(missing_ok=True)
        os.environ["DATABASE_URL"] = f"sqlite:///{db_file}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from analysis.services.build import report_build
    from annotation.models import Dataset
    from annotation.services.conversation_answers import conversation_ratings_import
    from annotation.services.conversations import conversations_import
    from annotation.services.exporting.conversations import conversation_records, conversations_export
    from scoring.metrics.conversation import SIMPLE, conversation_metrics
    from scoring.services.metrics.conversations import conversation_metrics_compute

    call_command("migrate", verbosity=0)
    conversations_file, ratings_file, n_turns, n_ratings = _generate(args, out)
    print(
        f"database: {django.db.connection.vendor}; {args.conversations} conversations, {n_turns} turns "
        f"({conversations_file.stat().st_size / 1e6:.1f} MB); {n_ratings} ratings "
        f"({ratings_file.stat().st_size / 1e6:.1f} MB)"
    )
    name = f"bench-conversations-{int(time.time())}"

    start = time.perf_counter()
    dataset = conversations_import(file=conversations_file, name=name)
    import_conversations = time.perf_counter() - start
    print(f"import conversations: {import_conversations:.2f} s ({n_turns / import_conversations:,.0f} turns/s)")

    start = time.perf_counter()
    imported = conversation_ratings_import(file=ratings_file, dataset=dataset, scales={"sensible": (0, 2)})
    import_ratings = time.perf_counter() - start
    print(f"import ratings: {imported.count} in {import_ratings:.2f} s ({imported.count / import_ratings:,.0f}/s)")
    total = import_conversations + import_ratings
    print(f"import total: {total:.2f} s (target < 30 s: {'met' if total < 30 else 'MISSED'})")

    start = time.perf_counter()
    with open(os.devnull, "w", encoding="utf-8") as sink:
        conversations_export(dataset=dataset, stream=sink)
    print(f"export conversations (JSONL): {time.perf_counter() - start:.2f} s")

    start = time.perf_counter()
    records = conversation_records(dataset)
    read = time.perf_counter() - start
    start = time.perf_counter()
    values = conversation_metrics([r["turns"] for r in records], SIMPLE)
    metrics = time.perf_counter() - start
    assert all(len(v) == len(records) for v in values.values())
    print(
        f"reference-free metrics ({', '.join(SIMPLE)}): {metrics:.2f} s for {len(records)} conversations "
        f"(+ {read:.2f} s reading them; target < 30 s: {'met' if metrics + read < 30 else 'MISSED'})"
    )
    start, cpu = time.perf_counter(), time.process_time()
    stored = conversation_metrics_compute(dataset=dataset)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(
        f"compute_conversation_metrics (read, score, store {stored['scores']:,} rows): {elapsed:.2f} s, "
        f"CPU {cpu:.2f} s "
        f"(target < 30 s: {'met' if elapsed < 30 else 'MISSED'})"
    )
    start, cpu = time.perf_counter(), time.process_time()
    if args.profile:
        import cProfile
        import pstats

        profile = cProfile.Profile()
        report = profile.runcall(report_build, dataset=dataset, n_boot=args.bootstrap)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
    else:
        report = report_build(dataset=dataset, n_boot=args.bootstrap)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    part = report["conversations"]
    print(
        f"report ({args.bootstrap} resamples; {part['n_conversations']:,} conversations, {part['n_systems']} systems, "
        f"{part['n_ratings']:,} + {part['n_turn_ratings']:,} ratings): {elapsed:.2f} s, CPU {cpu:.2f} s "
        f"(target < 15 s: {'met' if elapsed < 15 else 'MISSED'})"
    )
    if args.minilm:
        start = time.perf_counter()
        coherence = conversation_metrics([r["turns"] for r in records[: args.minilm]], ["minilm_coherence"])
        elapsed = time.perf_counter() - start
        n = len(coherence["minilm_coherence"])
        print(f"MiniLM coherence: {elapsed:.2f} s for {n} conversations (model load included)")
    Dataset.objects.filter(pk=dataset.pk).delete()


def _sentence(rng, question=False):
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 16)))
    return text + ("?" if question else ".")


def _generate(args, out):
    rng = random.Random(args.seed)
    systems = [f"bot{i:02d}" for i in range(args.systems)]
    conversations_file = out / "bench_conversations.jsonl"
    system_turns = []  # (conversation_id, turn index) of every system turn
    n_turns = 0
    with conversations_file.open("w", encoding="utf-8") as f:
        for c in range(args.conversations):
            n = rng.randint(args.turns - 5, args.turns + 5)
            turns = []
            for i in range(n):
                speaker = "user" if i % 2 == 0 else "system"
                turns.append({"speaker": speaker, "text": _sentence(rng, question=rng.random() < 0.3)})
                if speaker == "system":
                    system_turns.append((f"c{c}", i))
            n_turns += n
            record = {"conversation_id": f"c{c}", "system": systems[c % len(systems)], "turns": turns}
            if c % 3 == 0:
                record["seed"] = f"topic-{c // 33}"
            f.write(json.dumps(record) + "\n")
    ratings_file = out / "bench_conversation_ratings.jsonl"
    n_ratings = 0
    with ratings_file.open("w", encoding="utf-8") as f:
        for c in range(args.conversations):
            f.write(json.dumps({"conversation_id": f"c{c}", "worker": f"w{c % 40}", "score": rng.randint(1, 5)}) + "\n")
            n_ratings += 1
        for conversation_id, index in rng.sample(system_turns, min(args.turn_ratings, len(system_turns))):
            line = {"conversation_id": conversation_id, "turn": index, "worker": f"w{rng.randrange(40)}"}
            f.write(json.dumps({**line, "aspect": "sensible", "score": rng.randint(0, 2)}) + "\n")
            n_ratings += 1
    return conversations_file, ratings_file, n_turns, n_ratings


if __name__ == "__main__":
    main()
