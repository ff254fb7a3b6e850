from django.core.management.base import BaseCommand, CommandError

from annotation.importing import FORMATS, DataImportError
from annotation.management.cli import NO_OWNER, dataset_or_error, user_or_error
from annotation.services import ratings_import


class Command(BaseCommand):
    help = "Import existing human judgements as a survey of their own (provider 'imported'); all or nothing."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--dataset", required=True, help="Name of the dataset the ratings refer to.")
        parser.add_argument("--survey", help="Name of the new survey (default: <dataset>-imported).")
        parser.add_argument("--format", choices=FORMATS, help="Default: from the file name (.csv), else jsonl.")
        parser.add_argument(
            "--owner",
            default="",
            help="Username of the dataset's owner, needed when several researchers have a dataset of that name; "
            "also owns the new survey (default: the dataset's owner).",
        )
        parser.add_argument("--scale-min", type=int, default=1)
        parser.add_argument("--scale-max", type=int, default=5)

    def handle(self, *args, **options):
        dataset = dataset_or_error(options["dataset"], options["owner"])
        try:
            survey = ratings_import(
                file=options["file"],
                dataset=dataset,
                survey_name=options["survey"],
                owner=user_or_error(options["owner"] if options["owner"] != NO_OWNER else ""),
                fmt=options["format"],
                scale_min=options["scale_min"],
                scale_max=options["scale_max"],
            )
        except DataImportError as exc:
            # The same lines as the upload forms show: every problem (up to a cap), then nothing written.
            first, *rest = exc.report_lines()
            raise CommandError("\n".join([f"{options['file']}: {first}", *rest])) from None
        n_annotators = survey.ratings.values("annotator").distinct().count()
        self.stdout.write(
            f"Imported {survey.ratings.count()} ratings by {n_annotators} annotators as survey {survey.name!r}."
        )
