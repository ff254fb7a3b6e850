"""Report downloads are named so that a survey's report never overwrites its dataset's in a folder."""

from analysis.download_views import download_name
from analysis.models import Report
from tests.annotation.studies_helpers import make_survey


def test_a_survey_reports_files_carry_the_survey_name_beside_the_datasets(researcher):
    survey = make_survey(researcher, n_contexts=3, name="wave 2/prolific", dataset_name="lab-study", launch=False)
    dataset_report = Report(dataset=survey.dataset)
    survey_report = Report(dataset=survey.dataset, survey=survey)
    assert download_name(dataset_report, None, "zip") == "report-lab-study.zip"
    assert download_name(survey_report, None, "zip") == "report-lab-study-wave-2-prolific.zip"
    assert download_name(survey_report, "systems", "csv") == "report-lab-study-wave-2-prolific-systems.csv"
