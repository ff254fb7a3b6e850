from django.core.management.base import BaseCommand, CommandError

from annotation.importing import FORMATS, DataImportError
from annotation.management.cli import add_owner_argument, dataset_or_error
from annotation.services.conversation_answers import conversation_judgements_import


class Command(BaseCommand):
    help = (
        "Import side-by-side comparisons of two conversations (ACUTE-Eval): conversation_a, conversation_b, "
        "worker, winner (a, b or tie), question, optional reason. All or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--dataset", required=True, help="Name of the dataset of conversations.")
        add_owner_argument(parser)
        parser.add_argument("--format", choices=FORMATS, help="Default: from the file name (.csv), else jsonl.")

    def handle(self, *args, **options):
        dataset = dataset_or_error(options["dataset"], options["owner"])
        try:
            imported = conversation_judgements_import(file=options["file"], dataset=dataset, fmt=options["format"])
        except DataImportError as exc:
            first, *rest = exc.report_lines()
            raise CommandError("\n".join([f"{options['file']}: {first}", *rest])) from None
        self.stdout.write(
            f"Imported {imported.count} conversation comparisons by {imported.annotators} annotators into "
            f"dataset {dataset.name!r}."
        )
