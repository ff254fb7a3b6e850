from django.core.management.base import BaseCommand, CommandError

from annotation.crowd.base import ProviderError
from annotation.management.cli import add_owner_argument
from annotation.management.commands._mturk import mturk_survey
from annotation.services import mturk as services


class Command(BaseCommand):
    help = "Approve or reject MTurk assignments of a survey (by MTurk assignment id)."

    def add_arguments(self, parser):
        parser.add_argument("survey")
        add_owner_argument(parser)
        parser.add_argument("--approve", nargs="*", default=[], metavar="ASSIGNMENT")
        parser.add_argument("--reject", nargs="*", default=[], metavar="ASSIGNMENT")
        parser.add_argument("--reason", default="", help="Required with --reject; feedback with --approve.")
        parser.add_argument(
            "--apply-policy",
            action="store_true",
            help="Reject synced assignments that failed attention checks when the survey's policy is 'reject'.",
        )
        parser.add_argument("--approve-rest", action="store_true", help="With --apply-policy: approve the others.")

    def handle(self, *args, survey, approve, reject, reason, apply_policy, approve_rest, **options):
        survey = mturk_survey(survey, options["owner"])
        if reject and not reason.strip():
            raise CommandError("--reject needs --reason (the worker sees it).")
        try:
            for assignment_id in approve:
                slot = services.mturk_find_assignment(survey=survey, assignment_id=assignment_id)
                done = services.mturk_approve(assignment=slot, feedback=reason)
                self.stdout.write(f"approved {assignment_id}" + ("" if done else " (already)"))
            for assignment_id in reject:
                slot = services.mturk_find_assignment(survey=survey, assignment_id=assignment_id)
                done = services.mturk_reject(assignment=slot, reason=reason)
                self.stdout.write(f"rejected {assignment_id}" + ("" if done else " (already)"))
            if apply_policy:
                counts = services.mturk_apply_attention_policy(survey=survey, approve_rest=approve_rest)
                self.stdout.write(
                    f"policy {survey.attention_policy}: rejected {counts['rejected']}, approved {counts['approved']}"
                )
        except ProviderError as error:
            raise CommandError(str(error)) from None
