from annotation.kinds.writing.exporting import not_writing_problem, replies_export
from annotation.management.cli import SurveyExportCommand


class Command(SurveyExportCommand):
    help = (
        "Write a writing survey's replies, one record per reply (worker, context_id, text, status, "
        "integrity_flags, telemetry), to stdout or --output."
    )
    noun, ids_noun = "written replies", "replies"

    def refusal(self, survey):
        return not_writing_problem(survey)

    def export(self, *, survey, stream, fmt, real_ids):
        return replies_export(survey=survey, stream=stream, fmt=fmt, real_ids=real_ids)
