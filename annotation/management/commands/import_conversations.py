from django.core.management.base import BaseCommand, CommandError

from annotation.importing import FORMATS, DataImportError
from annotation.management.cli import user_or_error
from annotation.models import ConversationTurn
from annotation.services.conversations import conversations_import


class Command(BaseCommand):
    help = "Create a dataset of conversations from a JSONL or CSV file (docs/formats.md); all or nothing."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--name", required=True, help="Name of the new dataset.")
        parser.add_argument("--format", choices=FORMATS, help="Default: from the file name (.csv), else jsonl.")
        parser.add_argument("--owner", help="Username of the researcher who owns the dataset.")
        parser.add_argument("--description", default="")

    def handle(self, *args, **options):
        try:
            dataset = conversations_import(
                file=options["file"],
                name=options["name"],
                owner=user_or_error(options["owner"]),
                fmt=options["format"],
                description=options["description"],
            )
        except DataImportError as exc:
            first, *rest = exc.report_lines()
            raise CommandError("\n".join([f"{options['file']}: {first}", *rest])) from None
        n_turns = ConversationTurn.objects.filter(conversation__dataset=dataset).count()
        self.stdout.write(
            f"Imported dataset {dataset.name!r}: {dataset.conversations.count()} conversations, "
            f"{dataset.systems.count()} systems, {n_turns} turns."
        )
