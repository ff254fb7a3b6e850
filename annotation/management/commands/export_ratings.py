from django.core.management.base import BaseCommand

from annotation.kinds.rating.exporting import ratings_export
from annotation.management.cli import add_output_arguments, add_owner_argument, add_worker_ids_arguments, run_export


class Command(BaseCommand):
    help = "Write a dataset's ratings (of one --survey, or all) in the import format to stdout or --output."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        add_owner_argument(parser)
        parser.add_argument("--survey", help="Only this survey's ratings.")
        add_output_arguments(parser)
        add_worker_ids_arguments(parser)

    def handle(self, *args, **options):
        run_export(self, options, export=ratings_export, noun="ratings")
