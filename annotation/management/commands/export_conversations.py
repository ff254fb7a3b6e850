from django.core.management.base import BaseCommand

from annotation.exporting.conversations import conversations_export
from annotation.importing import FORMATS
from annotation.management.cli import add_owner_argument, dataset_or_error, quiet_broken_pipe


class Command(BaseCommand):
    help = "Write a dataset's conversations in the import format to stdout or --output."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        add_owner_argument(parser)
        parser.add_argument("--format", choices=FORMATS, default="jsonl")
        parser.add_argument("--output", help="File to write (default: stdout).")

    def handle(self, *args, **options):
        dataset = dataset_or_error(options["dataset"], options["owner"])
        if options["output"]:
            with open(options["output"], "w", encoding="utf-8", newline="") as stream:
                count = conversations_export(dataset=dataset, stream=stream, fmt=options["format"])
            self.stderr.write(f"Wrote {count} conversations to {options['output']}.")
            return
        try:
            conversations_export(dataset=dataset, stream=self.stdout, fmt=options["format"])
        except BrokenPipeError:
            quiet_broken_pipe()
