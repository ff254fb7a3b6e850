from django.core.management.base import BaseCommand, CommandError

from annotation.exporting import ratings_export
from annotation.importing import FORMATS
from annotation.management.cli import add_owner_argument, dataset_or_error, quiet_broken_pipe


class Command(BaseCommand):
    help = "Write a dataset's ratings (of one --survey, or all) in the import format to stdout or --output."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        add_owner_argument(parser)
        parser.add_argument("--survey", help="Only this survey's ratings.")
        parser.add_argument("--format", choices=FORMATS, default="jsonl")
        parser.add_argument("--output", help="File to write (default: stdout).")

    def handle(self, *args, **options):
        dataset = dataset_or_error(options["dataset"], options["owner"])
        survey = None
        if options["survey"]:
            survey = dataset.surveys.filter(name=options["survey"]).first()
            if survey is None:
                raise CommandError(f"dataset {dataset.name!r} has no survey named {options['survey']!r}")
        if options["output"]:
            with open(options["output"], "w", encoding="utf-8", newline="") as stream:
                count = ratings_export(dataset=dataset, survey=survey, stream=stream, fmt=options["format"])
            self.stderr.write(f"Wrote {count} ratings to {options['output']}.")
        else:
            try:
                ratings_export(dataset=dataset, survey=survey, stream=self.stdout, fmt=options["format"])
            except BrokenPipeError:
                quiet_broken_pipe()
