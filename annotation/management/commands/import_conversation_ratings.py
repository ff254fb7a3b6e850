import re

from django.core.management.base import BaseCommand, CommandError

from annotation.importing import FORMATS, DataImportError
from annotation.management.cli import add_owner_argument, dataset_or_error
from annotation.services.conversation_answers import conversation_ratings_import

_SCALE = re.compile(r"^([-a-zA-Z0-9_]{1,50})=(-?[0-9]+)(?:-|\.\.)(-?[0-9]+)$")


def aspect_scale(text):
    """`consistent=0-1` (or `0..1`) as ("consistent", (0, 1))."""
    match = _SCALE.match(text.strip())
    if not match:
        raise ValueError(text)
    return match.group(1), (int(match.group(2)), int(match.group(3)))


class Command(BaseCommand):
    help = (
        "Import ratings of a dataset's conversations, whole (no `turn`) or per system turn (`turn`: 0-based "
        "index); each aspect keeps its own scale. All or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--dataset", required=True, help="Name of the dataset of conversations.")
        add_owner_argument(parser)
        parser.add_argument("--format", choices=FORMATS, help="Default: from the file name (.csv), else jsonl.")
        parser.add_argument("--scale-min", type=int, help="Lowest score of aspects given no --scale (default 1).")
        parser.add_argument("--scale-max", type=int, help="Highest score of aspects given no --scale (default 5).")
        parser.add_argument(
            "--scale",
            action="append",
            type=aspect_scale,
            default=[],
            metavar="ASPECT=MIN-MAX",
            help="One aspect's scale, e.g. --scale consistent=0-1 (repeat for several). An aspect the dataset "
            "already has keeps its scale.",
        )

    def handle(self, *args, **options):
        dataset = dataset_or_error(options["dataset"], options["owner"])
        try:
            imported = conversation_ratings_import(
                file=options["file"],
                dataset=dataset,
                fmt=options["format"],
                scale_min=options["scale_min"],
                scale_max=options["scale_max"],
                scales=dict(options["scale"]),
            )
        except DataImportError as exc:
            first, *rest = exc.report_lines()
            raise CommandError("\n".join([f"{options['file']}: {first}", *rest])) from None
        scales = ", ".join(f"{a} {low}-{high}" for a, (low, high) in imported.aspects.items())
        self.stdout.write(
            f"Imported {imported.count} conversation ratings by {imported.annotators} annotators into dataset "
            f"{dataset.name!r} (aspects: {scales})."
        )
