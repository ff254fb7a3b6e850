from decimal import Decimal, InvalidOperation

from django.core.management.base import BaseCommand, CommandError

from annotation.crowd.base import ProviderError
from annotation.management.cli import add_owner_argument
from annotation.management.commands._mturk import mturk_survey
from annotation.services import mturk as services


class Command(BaseCommand):
    help = "Pay a bonus for an MTurk assignment (repeating the same bonus pays nothing twice)."

    def add_arguments(self, parser):
        parser.add_argument("survey")
        add_owner_argument(parser)
        parser.add_argument("assignment")
        parser.add_argument("--amount", required=True, help="US dollars, e.g. 0.25")
        parser.add_argument("--reason", required=True)
        parser.add_argument(
            "--key",
            default="",
            help="a name for this bonus (e.g. a ticket number): the command run again with the same key pays "
            "once even with another reason, and a new key pays a further bonus of the same amount and reason; "
            "without it, the same amount and reason pay once",
        )

    def handle(self, *args, survey, assignment, amount, reason, **options):
        survey = mturk_survey(survey, options["owner"])
        try:
            cents = int(Decimal(amount) * 100)
        except InvalidOperation:
            raise CommandError(f"--amount {amount!r} is not a dollar amount.") from None
        try:
            slot = services.mturk_find_assignment(survey=survey, assignment_id=assignment)
            done = services.mturk_bonus(assignment=slot, amount_cents=cents, reason=reason, key=options["key"])
        except ProviderError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"bonus {cents}c for {assignment}" + ("" if done else " (already paid)"))
