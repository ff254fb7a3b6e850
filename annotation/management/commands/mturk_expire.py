from django.core.management.base import BaseCommand, CommandError

from annotation.crowd.base import ProviderError
from annotation.management.cli import add_owner_argument
from annotation.management.commands._mturk import mturk_survey
from annotation.services import mturk as services


class Command(BaseCommand):
    help = "Expire a survey's MTurk HITs now, or extend them with --extend-hours."

    def add_arguments(self, parser):
        parser.add_argument("survey")
        add_owner_argument(parser)
        parser.add_argument("--extend-hours", type=float, default=None)

    def handle(self, *args, survey, extend_hours, **options):
        survey = mturk_survey(survey, options["owner"])
        try:
            if extend_hours:
                result = services.mturk_extend(survey=survey, hours=extend_hours)
                self.stdout.write(f"extended {result['extended']} HITs to {result['expires_at']:%Y-%m-%d %H:%M} UTC")
            else:
                self.stdout.write(f"expired {services.mturk_expire(survey=survey)['expired']} HITs")
        except ProviderError as error:
            raise CommandError(str(error)) from None
