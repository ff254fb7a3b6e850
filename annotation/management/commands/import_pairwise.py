from django.core.management.base import BaseCommand

from annotation.kinds.pairwise.imports import pairwise_import
from annotation.management.cli import add_import_arguments, run_import


class Command(BaseCommand):
    help = "Import pairwise (A/B) judgements as a pairwise survey of their own (provider 'imported'); all or nothing."

    def add_arguments(self, parser):
        add_import_arguments(parser, noun="judgements", default_survey="pairwise")

    def handle(self, *args, **options):
        survey = run_import(options, import_file=pairwise_import)
        judgements = survey.pairwise_judgements
        n_annotators = judgements.values("annotator").distinct().count()
        self.stdout.write(
            f"Imported {judgements.count()} pairwise judgements by {n_annotators} annotators as survey {survey.name!r}."
        )
