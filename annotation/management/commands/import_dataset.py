from django.core.management.base import BaseCommand, CommandError

from annotation.importing import FORMATS, DataImportError
from annotation.management.cli import user_or_error
from annotation.models import Response
from annotation.services import dataset_import


class Command(BaseCommand):
    help = "Import a dataset (contexts, references, responses) from a JSONL or CSV file; all or nothing."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--name", required=True, help="Name of the new dataset.")
        parser.add_argument("--format", choices=FORMATS, help="Default: from the file name (.csv), else jsonl.")
        parser.add_argument("--owner", help="Username of the researcher who owns the dataset.")
        parser.add_argument("--description", default="")

    def handle(self, *args, **options):
        owner = user_or_error(options["owner"])
        try:
            dataset = dataset_import(
                file=options["file"],
                name=options["name"],
                owner=owner,
                fmt=options["format"],
                description=options["description"],
            )
        except DataImportError as exc:
            # The same lines as the upload forms show: every problem (up to a cap), then nothing written.
            first, *rest = exc.report_lines()
            raise CommandError("\n".join([f"{options['file']}: {first}", *rest])) from None
        self.stdout.write(
            f"Imported dataset {dataset.name!r}: {dataset.contexts.count()} contexts, "
            f"{dataset.systems.count()} systems, {Response.objects.filter(context__dataset=dataset).count()} responses."
        )
