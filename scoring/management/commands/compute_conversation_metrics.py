"""python manage.py compute_conversation_metrics --dataset NAME [--owner U] [--metric M]...
[--judge J... [--level turn|conversation|both] [--aspect A]...]"""

import time

from django.core.management.base import BaseCommand, CommandError

from annotation.management.cli import add_owner_argument, dataset_or_error
from scoring.judges.client import JudgeRequestFailed
from scoring.metrics.conversation import ALL, SIMPLE, TURN_ALL, TURN_SIMPLE
from scoring.services.judges.registry import JudgeRefusal
from scoring.services.metrics import conversations as services

LEVELS = ("turn", "conversation", "both")


class Command(BaseCommand):
    help = (
        "Compute the reference-free conversation metrics of every conversation of a dataset and store them "
        f"(default: {', '.join(SIMPLE)}; name minilm_coherence with --metric to add the neural one), and the "
        f"turn-level metrics of every system turn, its context the conversation so far (default: "
        f"{', '.join(TURN_SIMPLE)}; name turn_coherence to add the neural one)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True, help="Dataset name.")
        add_owner_argument(parser)
        parser.add_argument(
            "--metric",
            action="append",
            default=[],
            choices=ALL + TURN_ALL,
            help="Metric name (conversation or turn level); repeatable.",
        )
        parser.add_argument(
            "--judge",
            action="append",
            default=[],
            help="An LLM judge of yours (its name) to rate every system turn, its context the conversation so far "
            "(--level turn, the default), or every whole conversation on each aspect (--level conversation), or "
            "both; repeatable. With --judge alone, only the judges run.",
        )
        parser.add_argument(
            "--level",
            choices=LEVELS,
            default="turn",
            help="What the judges rate: each system turn (turn, the default), each whole conversation once per "
            "aspect with a whole-conversation prompt (conversation; stored as judge:J@aspect), or both.",
        )
        parser.add_argument(
            "--aspect",
            action="append",
            default=[],
            help="A whole-conversation aspect the judges rate at --level conversation (its scale the dataset's); "
            "repeatable. Default: every aspect the whole conversations are rated on, else overall.",
        )

    def handle(self, *args, **options):
        dataset = dataset_or_error(options["dataset"], options["owner"])
        if not dataset.conversations.exists():
            raise CommandError(f"dataset {dataset.name!r} holds no conversations")
        started = time.perf_counter()
        named = options["metric"]
        judges = options["judge"]
        conversation_level = [m for m in named if m in ALL]
        turn_level = [m for m in named if m in TURN_ALL]
        if (conversation_level or not named) and not (judges and not named):
            result = services.conversation_metrics_compute(dataset=dataset, metrics=conversation_level or None)
            self.stdout.write(
                f"{result['scores']:,} scores of {result['conversations']:,} conversations "
                f"({', '.join(result['metrics'])}) in {time.perf_counter() - started:.1f} s"
            )
        for name in judges:
            if options["level"] in ("conversation", "both"):
                self._judge_conversations(dataset, name, options["aspect"])
            if options["level"] in ("turn", "both"):
                self._judge_turns(dataset, name)
        if (turn_level or not named) and not (judges and not named):
            started = time.perf_counter()
            result = services.turn_metrics_compute(dataset=dataset, metrics=turn_level or None)
            self.stdout.write(
                f"{result['scores']:,} scores of {result['turns']:,} system turns "
                f"({', '.join(result['metrics'])}) in {time.perf_counter() - started:.1f} s"
            )

    def _judge_turns(self, dataset, name):
        started = time.perf_counter()
        try:
            result = services.turn_judge_compute(dataset=dataset, metric=f"judge:{name}")
        except (JudgeRefusal, JudgeRequestFailed) as error:  # say which judge; nothing of it was stored
            raise CommandError(f"judge {name!r}: {error}") from None
        self.stdout.write(
            f"{result['scores']:,} scores of {result['turns']:,} system turns ({result['metric']}) "
            f"in {time.perf_counter() - started:.1f} s"
        )

    def _judge_conversations(self, dataset, name, aspects):
        started = time.perf_counter()
        try:
            result = services.conversation_judge_compute(dataset=dataset, metric=f"judge:{name}", aspects=aspects)
        except (JudgeRefusal, JudgeRequestFailed, ValueError) as error:  # nothing of this judging was stored
            raise CommandError(f"judge {name!r} on whole conversations: {error}") from None
        self.stdout.write(
            f"{result['scores']:,} scores of {result['conversations']:,} whole conversations (judge:{name}, "
            f"aspects {', '.join(result['aspects'])}) in {time.perf_counter() - started:.1f} s"
        )
