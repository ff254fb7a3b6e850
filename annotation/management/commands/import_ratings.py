from django.core.management.base import BaseCommand

from annotation.management.cli import add_import_arguments, run_import
from annotation.services import ratings_import


class Command(BaseCommand):
    help = "Import existing human judgements as a survey of their own (provider 'imported'); all or nothing."

    def add_arguments(self, parser):
        add_import_arguments(parser, noun="ratings", default_survey="imported")
        parser.add_argument("--scale-min", type=int, default=1)
        parser.add_argument("--scale-max", type=int, default=5)

    def handle(self, *args, **options):
        survey = run_import(
            options, import_file=ratings_import, scale_min=options["scale_min"], scale_max=options["scale_max"]
        )
        n_annotators = survey.ratings.values("annotator").distinct().count()
        self.stdout.write(
            f"Imported {survey.ratings.count()} ratings by {n_annotators} annotators as survey {survey.name!r}."
        )
