from django.core.management.base import BaseCommand

from annotation.management.cli import add_owner_argument, survey_or_error
from annotation.services.datasheet import datasheet
from annotation.services.datasheet_render import RENDERERS


class Command(BaseCommand):
    help = (
        "Write a survey's Human Evaluation Datasheet (HEDS 3.0 sections) filled from RateLab's records, with a "
        "methods paragraph stating the same figures; fields RateLab cannot know are marked TO FILL IN."
    )

    def add_arguments(self, parser):
        parser.add_argument("--survey", required=True, help="Survey name (or id).")
        add_owner_argument(parser)
        parser.add_argument("--format", choices=sorted(RENDERERS), default="md")
        parser.add_argument("--output", help="File to write (default: stdout).")

    def handle(self, *args, **options):
        survey = survey_or_error(options["survey"], options["owner"])
        text = RENDERERS[options["format"]](datasheet(survey))
        if options["output"]:
            with open(options["output"], "w", encoding="utf-8") as stream:
                stream.write(text)
            self.stderr.write(f"Wrote the datasheet of {survey.name!r} to {options['output']}.")
            return
        self.stdout.write(text, ending="")
