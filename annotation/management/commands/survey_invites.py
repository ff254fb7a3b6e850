from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Survey
from annotation.services.identities import IdentityRefused, identities_invite


class Command(BaseCommand):
    help = (
        "Make personal invitation links for a local survey: one new annotator identity per label, each "
        "link carrying that identity's secret resume code. Prints 'label<TAB>link' per line."
    )

    def add_arguments(self, parser):
        parser.add_argument("--survey", required=True, help="Survey name.")
        parser.add_argument("--owner", default="", help="Username of the survey's owner, where names repeat.")
        who = parser.add_mutually_exclusive_group(required=True)
        who.add_argument("--labels", default="", help="Comma-separated identifiers, one invitation each.")
        who.add_argument("--count", type=int, default=0, help="This many invitations with generated identifiers.")
        parser.add_argument("--base-url", default="", help="Public address for the links (default PUBLIC_BASE_URL).")

    def handle(self, **options):
        surveys = Survey.objects.filter(name=options["survey"], provider=Survey.Provider.LOCAL)
        if options["owner"]:
            surveys = surveys.filter(owner__username=options["owner"])
        found = list(surveys[:2])
        if not found:
            raise CommandError(f"No local survey named {options['survey']!r}.")
        if len(found) > 1:
            raise CommandError(f"More than one survey is named {options['survey']!r}: give --owner.")
        if not 0 <= options["count"] <= 10_000:
            raise CommandError("--count must be between 1 and 10000.")
        labels = [label.strip() for label in options["labels"].split(",") if label.strip()] or [""] * options["count"]
        if not labels:
            raise CommandError("Give --labels or a --count of at least 1.")
        try:
            made = identities_invite(survey=found[0], labels=labels)
        except IdentityRefused as error:
            raise CommandError(str(error)) from None
        base = (options["base_url"] or settings.PUBLIC_BASE_URL or "http://127.0.0.1:8000").rstrip("/")
        for annotator, code in made:
            self.stdout.write(f"{annotator.worker_id}\t{base}/s/{found[0].token}/?invite={code}")
