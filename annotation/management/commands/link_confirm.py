from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.crowd.link_platform import confirm_participants
from annotation.models import Survey


class Command(BaseCommand):
    help = "Confirm the participants a link-and-code platform lists as completed (one id per line)."

    def add_arguments(self, parser):
        parser.add_argument("--survey", required=True)
        parser.add_argument("ids_file", help="A text file of participant ids, one per line, from the platform.")

    def handle(self, *args, survey, ids_file, **options):
        found = Survey.objects.filter(name=survey, provider=Survey.Provider.LINK).first()
        if found is None:
            raise CommandError(f"No link-and-code survey named {survey!r}.")
        try:
            ids = Path(ids_file).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"Cannot read {ids_file}: {error}") from None
        confirmed, unknown = confirm_participants(survey=found, participant_ids=ids)
        self.stdout.write(f"confirmed={confirmed} unknown={len(unknown)}")
        if unknown:
            self.stderr.write("Never seen on this survey's entry page: " + ", ".join(unknown[:20]))
