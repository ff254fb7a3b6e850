from celery.exceptions import Retry
from django.core.management.base import BaseCommand, CommandError

from annotation.crowd.base import ProviderError
from annotation.crowd.mturk.tasks import sync_survey
from annotation.management.cli import add_owner_argument
from annotation.management.commands._mturk import mturk_survey


class Command(BaseCommand):
    help = "Bring MTurk's assignments of a survey into the app (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument("survey")
        add_owner_argument(parser)

    def handle(self, *args, survey, **options):
        survey = mturk_survey(survey, options["owner"])
        try:
            summary = sync_survey.apply(args=(survey.pk,), throw=False).get()
        except (ProviderError, Retry) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(" ".join(f"{key}={value}" for key, value in summary.items()))
