from django.core.management.base import BaseCommand

from annotation.kinds.pairwise.exporting import pairwise_export
from annotation.management.cli import add_output_arguments, add_owner_argument, add_worker_ids_arguments, run_export


class Command(BaseCommand):
    help = "Write a dataset's pairwise judgements (of one --survey, or all) in the import format."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        add_owner_argument(parser)
        parser.add_argument("--survey", help="Only this survey's judgements.")
        add_output_arguments(parser)
        add_worker_ids_arguments(parser)

    def handle(self, *args, **options):
        run_export(self, options, export=pairwise_export, noun="pairwise judgements")
