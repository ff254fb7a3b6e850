"""The survey page's datasheet download (HEDS sections and methods paragraph; owner only)."""

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.utils.http import content_disposition_header

from annotation.services.datasheet import datasheet
from annotation.services.datasheet_render import RENDERERS
from annotation.services.exporting import download_filename
from annotation.views.surveys import survey_or_404

CONTENT_TYPES = {
    "md": "text/markdown; charset=utf-8",
    "json": "application/json; charset=utf-8",
    "latex": "application/x-latex; charset=utf-8",
}
EXTENSIONS = {"md": "md", "json": "json", "latex": "tex"}


@login_required
def survey_datasheet(request, pk, fmt):
    survey = survey_or_404(request, pk, change=True)
    response = HttpResponse(RENDERERS[fmt](datasheet(survey)), content_type=CONTENT_TYPES[fmt])
    response["Content-Disposition"] = content_disposition_header(
        True, download_filename(survey.name, f"datasheet.{EXTENSIONS[fmt]}")
    )
    return response
