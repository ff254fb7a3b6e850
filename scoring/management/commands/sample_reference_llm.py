"""python manage.py sample_reference_llm --survey S --judge J [--samples K] [--owner USERNAME]

Issue 40: ask a registered judge endpoint for K next turns of each context of a writing survey's dataset
(stored once as systems `<judge>-sample-1..K`; a rerun asks only for what is missing), name them as the
survey's reference LLM, and print what the run used and cost. The quality page then flags written
replies very like them."""

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Survey
from scoring.judges.client import JudgeRequestFailed
from scoring.services.judges.reference_llm import MAX_SAMPLES, sample_reference_llm
from scoring.services.judges.registry import JudgeRefusal, judge_named


class Command(BaseCommand):
    help = "Sample a reference LLM's replies for a writing survey's contexts from a judge endpoint."

    def add_arguments(self, parser):
        parser.add_argument("--survey", required=True, help="A writing survey (name).")
        parser.add_argument("--judge", required=True, help="A judge added with judge_add (its endpoint and model).")
        parser.add_argument("--samples", type=int, default=3, help=f"Replies per context, 1-{MAX_SAMPLES} (default 3).")
        parser.add_argument("--owner", help="The survey's and judge's owner (username), when names are shared.")

    def handle(self, *args, **options):
        surveys = Survey.objects.filter(name=options["survey"])
        if options["owner"]:
            surveys = surveys.filter(owner__username=options["owner"])
        if surveys.count() != 1:
            found = "no survey" if not surveys.exists() else "several surveys (give --owner)"
            raise CommandError(f"{found} named {options['survey']!r}")
        survey = surveys.get()
        try:
            judge = judge_named(options["judge"], owner=survey.owner)
            run = sample_reference_llm(survey=survey, judge=judge, samples=options["samples"])
        except (JudgeRefusal, JudgeRequestFailed, ValueError) as error:
            raise CommandError(str(error)) from None
        cost = "no price set for the judge" if run.cost is None else f"{run.cost:.6f}"
        self.stdout.write(
            f"systems\t{','.join(run.systems)}\ncontexts asked\t{run.asked}\ncontexts cached\t{run.cached}\n"
            f"samples stored\t{run.stored}\nempty samples\t{run.empty}\nfailed contexts\t{run.failed}\n"
            f"prompt tokens\t{run.prompt_tokens}\ncompletion tokens\t{run.completion_tokens}\ncost\t{cost}"
        )
        if run.failed:
            raise CommandError(f"{run.failed} context(s) failed; rerun to ask for them again (nothing is re-sent)")
