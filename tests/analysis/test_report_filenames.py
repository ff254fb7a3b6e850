"""Report downloads are named so that a survey's report never overwrites its dataset's in a folder."""

from analysis.models import Report
from analysis.views.downloads import download_name, plot_download_name
from tests.annotation.studies_helpers import make_survey


def test_a_survey_reports_files_carry_the_survey_name_beside_the_datasets(researcher):
    survey = make_survey(researcher, n_contexts=3, name="wave 2/prolific", dataset_name="lab-study", launch=False)
    dataset_report = Report(dataset=survey.dataset)
    survey_report = Report(dataset=survey.dataset, survey=survey)
    assert download_name(dataset_report, None, "zip") == "report-lab-study.zip"
    assert download_name(survey_report, None, "zip") == "report-lab-study-wave-2-prolific.zip"
    assert download_name(survey_report, "systems", "csv") == "report-lab-study-wave-2-prolific-systems.csv"


def test_a_plots_download_carries_the_dataset_survey_kind_and_metric_and_no_character_windows_refuses(researcher):
    survey = make_survey(researcher, n_contexts=3, name="wave 2", dataset_name="lab-study", launch=False)
    dataset_report = Report(dataset=survey.dataset)
    survey_report = Report(dataset=survey.dataset, survey=survey)
    assert plot_download_name(dataset_report, "metric", "adem:demo-adem", "png") == (
        "report-lab-study-metric-adem-demo-adem.png"
    )
    assert plot_download_name(survey_report, "system", "judge:gpt-4o/fluency", "svg") == (
        "report-lab-study-wave-2-system-judge-gpt-4o-fluency.svg"
    )
    assert plot_download_name(dataset_report, "human", None, "svg") == "report-lab-study-human.svg"
    for name in (
        plot_download_name(dataset_report, "metric", 'a:b\\c/d*e?f"g<h>i|j', "png"),
        plot_download_name(survey_report, "pairwise", None, "svg"),
    ):
        assert not set(name) & set('<>:"/\\|?*'), name
