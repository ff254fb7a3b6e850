from celery.exceptions import Retry
from django.core.management.base import BaseCommand, CommandError

from annotation.crowd.base import ProviderError
from annotation.crowd.mturk.pure import dollars
from annotation.crowd.mturk.tasks import publish_survey_hits
from annotation.management.cli import add_owner_argument
from annotation.management.commands._mturk import mturk_survey
from annotation.services import mturk as services


class Command(BaseCommand):
    help = "Publish a survey's unpublished HITs to MTurk (sandbox unless --live). Safe to run again."

    def add_arguments(self, parser):
        parser.add_argument("survey")
        add_owner_argument(parser)
        parser.add_argument("--live", action="store_true", help="Publish on the live marketplace (real money).")
        parser.add_argument("--estimate-only", action="store_true", help="Print the cost and balance; publish nothing.")

    def handle(self, *args, survey, live, estimate_only, **options):
        survey = mturk_survey(survey, options["owner"])
        try:
            if live:
                services.mturk_settings_update(survey=survey, live=True)
            row = services.mturk_settings_ensure(survey=survey)
            estimate = services.mturk_cost_estimate(survey=survey)
            balance = services.mturk_balance_cents(survey=survey)
        except ProviderError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            f"{'sandbox' if row.sandbox else 'LIVE'}: {estimate['hits']} HITs x {estimate['assignments_per_hit']} "
            f"assignments, rewards ${dollars(estimate['rewards_cents'])} + fees ${dollars(estimate['fees_cents'])} "
            f"({estimate['fee_rate']:.0%}) = ${dollars(estimate['total_cents'])}; balance ${dollars(balance)}"
        )
        if estimate_only:
            return
        try:
            result = publish_survey_hits.apply(args=(survey.pk,), throw=False).get()
        except (ProviderError, Retry) as error:
            raise CommandError(f"{error} (run the command again to publish the rest)") from None
        self.stdout.write(f"created {result['created']} HITs (HIT type {result['hit_type_id']})")
