from django.core.management.base import BaseCommand, CommandError

from annotation.importing import FORMATS, DataImportError
from annotation.management.cli import NO_OWNER, dataset_or_error, user_or_error
from annotation.services.imports_pairwise import pairwise_import


class Command(BaseCommand):
    help = "Import pairwise (A/B) judgements as a pairwise survey of their own (provider 'imported'); all or nothing."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--dataset", required=True, help="Name of the dataset the judgements refer to.")
        parser.add_argument("--survey", help="Name of the new survey (default: <dataset>-pairwise).")
        parser.add_argument("--format", choices=FORMATS, help="Default: from the file name (.csv), else jsonl.")
        parser.add_argument(
            "--owner",
            default="",
            help="Username of the dataset's owner, needed when several researchers have a dataset of that name; "
            "also owns the new survey (default: the dataset's owner).",
        )

    def handle(self, *args, **options):
        dataset = dataset_or_error(options["dataset"], options["owner"])
        try:
            survey = pairwise_import(
                file=options["file"],
                dataset=dataset,
                survey_name=options["survey"],
                owner=user_or_error(options["owner"] if options["owner"] != NO_OWNER else ""),
                fmt=options["format"],
            )
        except DataImportError as exc:
            first, *rest = exc.report_lines()
            raise CommandError("\n".join([f"{options['file']}: {first}", *rest])) from None
        judgements = survey.pairwise_judgements
        n_annotators = judgements.values("annotator").distinct().count()
        self.stdout.write(
            f"Imported {judgements.count()} pairwise judgements by {n_annotators} annotators as survey {survey.name!r}."
        )
