"""python manage.py compute_conversation_metrics --dataset NAME [--owner U] [--metric M]..."""

import time

from django.core.management.base import BaseCommand, CommandError

from annotation.management.cli import add_owner_argument, dataset_or_error
from scoring.metrics.conversation import ALL, SIMPLE
from scoring.services.metrics import conversations as services


class Command(BaseCommand):
    help = (
        "Compute the reference-free conversation metrics of every conversation of a dataset and store them "
        f"(default: {', '.join(SIMPLE)}; name minilm_coherence with --metric to add the neural one)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True, help="Dataset name.")
        add_owner_argument(parser)
        parser.add_argument("--metric", action="append", default=[], choices=ALL, help="Metric name; repeatable.")

    def handle(self, *args, **options):
        dataset = dataset_or_error(options["dataset"], options["owner"])
        if not dataset.conversations.exists():
            raise CommandError(f"dataset {dataset.name!r} holds no conversations")
        started = time.perf_counter()
        result = services.conversation_metrics_compute(dataset=dataset, metrics=options["metric"] or None)
        self.stdout.write(
            f"{result['scores']:,} scores of {result['conversations']:,} conversations "
            f"({', '.join(result['metrics'])}) in {time.perf_counter() - started:.1f} s"
        )
