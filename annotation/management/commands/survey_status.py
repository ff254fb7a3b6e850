import json

from django.core.management.base import BaseCommand

from annotation.management.cli import add_owner_argument, survey_or_error
from annotation.selectors.studies import survey_progress
from annotation.views.task_page.wording import task_wording


class Command(BaseCommand):
    help = "Print a survey's progress: HITs done, assignments, annotators, flagged work, ratings."

    def add_arguments(self, parser):
        parser.add_argument("survey", help="Survey name.")
        add_owner_argument(parser)
        parser.add_argument("--json", action="store_true")

    def handle(self, **options):
        survey = survey_or_error(options["survey"], options["owner"])
        progress = survey_progress(survey=survey)
        if options["json"]:
            self.stdout.write(json.dumps({"survey": survey.name, "status": survey.status, **progress}))
            return
        self.stdout.write(f"{survey.name} ({survey.status}, {survey.provider})")
        self.stdout.write(f"  HITs complete:  {progress['hits_done']} / {progress['hits_total']}")
        self.stdout.write(
            f"  Assignments:    {progress['assignments_done']} submitted / {progress['assignments_total']}"
            f" ({progress['assignments']['active']} in progress)"
        )
        self.stdout.write(f"  Annotators:     {progress['annotators']}")
        answers = task_wording(survey)["answers"] + ":"  # ratings, judgements or written replies
        self.stdout.write(f"  {answers:<15} {progress['ratings']}")
        self.stdout.write(f"  Flagged:        {progress['flagged']}  excluded annotators: {progress['excluded']}")
