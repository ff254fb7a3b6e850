from django.core.management.base import BaseCommand, CommandError

from annotation.importing import FORMATS
from annotation.kinds.writing.exporting import not_writing_problem, replies_export
from annotation.management.cli import add_owner_argument, add_worker_ids_arguments, quiet_broken_pipe, survey_or_error


class Command(BaseCommand):
    help = (
        "Write a writing survey's replies, one record per reply (worker, context_id, text, status, "
        "integrity_flags, telemetry), to stdout or --output."
    )

    def add_arguments(self, parser):
        parser.add_argument("--survey", required=True, help="Survey name (or id).")
        add_owner_argument(parser)
        parser.add_argument("--format", choices=FORMATS, default="jsonl")
        parser.add_argument("--output", help="File to write (default: stdout).")
        add_worker_ids_arguments(parser)

    def handle(self, *args, **options):
        survey = survey_or_error(options["survey"], options["owner"])
        if not_writing_problem(survey):
            raise CommandError(not_writing_problem(survey))
        if options["real_ids"]:
            self.stderr.write("These replies carry real worker ids: keep the file to yourself, do not publish it.")
        export = {"survey": survey, "fmt": options["format"], "real_ids": options["real_ids"]}
        if options["output"]:
            with open(options["output"], "w", encoding="utf-8", newline="") as stream:
                count = replies_export(stream=stream, **export)
            self.stderr.write(f"Wrote {count} written replies to {options['output']}.")
            return
        try:
            replies_export(stream=self.stdout, **export)
        except BrokenPipeError:
            quiet_broken_pipe()
