from django.core.management.base import BaseCommand, CommandError

from annotation.crowd.base import ProviderError
from annotation.management.cli import add_owner_argument
from annotation.management.commands._mturk import mturk_survey
from annotation.services import mturk as services


class Command(BaseCommand):
    help = "Give MTurk workers the exclusion qualification, keeping them from this and later surveys."

    def add_arguments(self, parser):
        parser.add_argument("survey", help="A survey whose endpoint (sandbox or live) is used.")
        add_owner_argument(parser)
        parser.add_argument("workers", nargs="+")
        parser.add_argument("--reason", required=True)

    def handle(self, *args, survey, workers, reason, **options):
        survey = mturk_survey(survey, options["owner"])
        try:
            for worker_id in workers:
                done = services.mturk_block(survey=survey, worker_id=worker_id, reason=reason)
                self.stdout.write(f"blocked {worker_id}" + ("" if done else " (already)"))
        except ProviderError as error:
            raise CommandError(str(error)) from None
