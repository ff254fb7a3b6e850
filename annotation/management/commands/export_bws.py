from annotation.kinds.bws.exporting import bws_export
from annotation.kinds.bws.kind import BWSKind
from annotation.kinds.registry import kind_for
from annotation.management.cli import SurveyExportCommand


class Command(SurveyExportCommand):
    help = (
        "Write a best-worst survey's judgements, one line per judgement: worker (pseudonymised unless "
        "--real-ids), context_id, the tuple's systems in shown order, best, worst."
    )
    noun, ids_noun = "best-worst judgements", "judgements"

    def refusal(self, survey):
        return "" if isinstance(kind_for(survey), BWSKind) else f"Survey {survey.name!r} is not a best-worst survey."

    def export(self, *, survey, stream, fmt, real_ids):
        return bws_export(dataset=survey.dataset, survey=survey, stream=stream, fmt=fmt, real_ids=real_ids)
