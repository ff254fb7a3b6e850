"""The simulated crowd's paster and straight-liner (annotation.services.demo_data.simulation) are the ones flagged."""

import pytest

from annotation.quality.recompute import quality_recompute
from annotation.services.demo_data.simulation import ratings_simulate
from tests.annotation.studies_helpers import make_survey

pytestmark = pytest.mark.django_db


def _flagged(report):
    integrity = report["integrity"]
    reply_flags = {w["worker"] for w in integrity["workers"] if any(c["raised"] for c in w["reply_flags"].values())}
    rating_flags = {w["worker"]: {f["name"] for f in w["rating_flags"]} for w in integrity["workers"]}
    return reply_flags, rating_flags


def test_the_simulated_paster_is_the_only_writer_flagged_mostly_pasted(researcher):
    survey = make_survey(researcher, n_contexts=8, name="sim-writing", task_type="write", write_system_name="crowd",
                         contexts_per_hit=4, assignments_per_hit=3)
    summary = ratings_simulate(survey=survey, n_annotators=4, seed=3, pasters=1)
    assert summary["pasters"] == 1 and summary["written"] == 24
    report = quality_recompute(survey=survey).data
    flagged, _ = _flagged(report)
    pasted = {r["worker"] for r in report["integrity"]["flagged_replies"]
              if any(f["name"] == "mostly_pasted" for f in r["flags"])}
    assert len(flagged) == 1 and flagged == pasted
    paster = next(w for w in report["integrity"]["workers"] if w["worker"] in flagged)
    assert paster["reply_flags"]["mostly_pasted"]["raised"] == paster["replies"] > 0
    assert report["integrity"]["n_with_telemetry"] == 24


def test_the_simulated_straight_liner_is_flagged_and_the_careful_raters_are_not(researcher):
    survey = make_survey(researcher, n_contexts=12, name="sim-rating", contexts_per_hit=6, assignments_per_hit=4,
                         attention_checks_per_hit=0)
    summary = ratings_simulate(survey=survey, n_annotators=4, seed=1, straight_liners=1)
    assert summary["straight_liners"] == 1
    report = quality_recompute(survey=survey).data
    _, rating_flags = _flagged(report)
    liners = {w for w, names in rating_flags.items() if "straight_lining" in names}
    assert len(liners) == 1
    assert all(not names for w, names in rating_flags.items() if w not in liners), rating_flags
    competence = {w["worker"]: w["competence"]["mace"] for w in report["integrity"]["workers"]}
    (liner,) = liners
    assert competence[liner] == min(competence.values())


def test_more_straight_liners_and_pasters_than_careful_annotators_is_refused(researcher):
    survey = make_survey(researcher, n_contexts=4, name="sim-small")
    with pytest.raises(ValueError, match="more straight-liners and pasters"):
        ratings_simulate(survey=survey, n_annotators=2, careless_fraction=0.5, straight_liners=1, pasters=1)
