"""Writing telemetry stored per reply, and the integrity section computed from it (hand-checkable data)."""

import json

import pytest

from annotation import services
from annotation.models import WrittenResponse
from annotation.quality.integrity_report import reply_flags, survey_integrity, written_rows
from annotation.quality.recompute import quality_recompute
from tests.annotation.studies_helpers import make_survey, rated_by_two_careful_raters_and_a_straight_liner

pytestmark = pytest.mark.django_db

TYPED = "I would go to the beach because the weather is lovely today."  # 60 characters
PASTED = "As an assistant, I recommend the beach: sunny skies and calm water await you there."


def typed_telemetry(text):
    # 60 keys in 12 s of typing: 5 keys a second, a person's pace; no paste.
    return {
        "first_key_ms": 2400,
        "active_typing_ms": 12000,
        "keystrokes": len(text),
        "typed_chars": len(text),
        "deletions": 3,
        "final_length": len(text),
        "paste_events": 0,
        "pasted_chars": 0,
        "focus_changes": 0,
    }


def pasted_telemetry(text):
    return {
        "first_key_ms": 900,
        "active_typing_ms": 0,
        "keystrokes": 0,
        "typed_chars": 0,
        "deletions": 0,
        "final_length": len(text),
        "paste_events": 1,
        "pasted_chars": len(text),
        "focus_changes": 2,
    }


def _writing_survey(owner, **settings):
    return make_survey(
        owner,
        n_contexts=2,
        name="writers",
        task_type="write",
        write_system_name="people",
        contexts_per_hit=2,
        assignments_per_hit=2,
        attention_checks_per_hit=0,
        **settings,
    )


def _submit(survey, worker, texts, telemetry):
    assignment = services.assignment_claim(survey=survey, worker_id=worker)
    items = services.assignment_items(assignment=assignment)
    answers = {
        item.pk: {"scores": {}, "seconds": "20", "text": text, "telemetry": json.dumps(telemetry(text))}
        for item, text in zip(items, texts, strict=True)
    }
    services.assignment_submit(assignment=assignment, answers=answers)
    return assignment


def test_telemetry_is_stored_with_each_reply_and_the_final_length_is_the_stored_text(researcher):
    survey = _writing_survey(researcher)
    sent = typed_telemetry(TYPED)
    sent["final_length"] = 999  # the page's count; the server counts the stored text itself
    _submit(survey, "typist", [TYPED + "  ", TYPED], lambda text: sent)
    stored = list(WrittenResponse.objects.order_by("pk").values_list("telemetry", flat=True))
    assert [t["final_length"] for t in stored] == [60, 60]
    assert stored[0]["keystrokes"] == 60 and stored[0]["first_key_ms"] == 2400


@pytest.mark.parametrize(
    "telemetry, why",
    [
        ('{"keystrokes": 5, "keylog": "abc"}', "1 unknown field"),
        ('{"keystrokes": -1}', "keystrokes is out of bounds"),
        ('{"keystrokes": 1.5}', "keystrokes is not a whole number"),
        ('{"first_key_ms": 100000000}', "first_key_ms is out of bounds"),
        ('{"keystrokes": true}', "keystrokes is not a whole number"),
        ("[1, 2]", "not an object"),
        ("{oops", "not JSON"),
    ],
)
def test_a_telemetry_the_page_does_not_make_refuses_the_submission_and_stores_nothing(researcher, telemetry, why):
    survey = _writing_survey(researcher)
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    items = services.assignment_items(assignment=assignment)
    answers = {item.pk: {"scores": {}, "seconds": "5", "text": TYPED, "telemetry": telemetry} for item in items}
    with pytest.raises(services.SubmissionRefused, match=why):
        services.assignment_submit(assignment=assignment, answers=answers)
    assert not WrittenResponse.objects.exists()


def test_a_reply_sent_without_telemetry_is_stored_with_none_and_gets_no_telemetry_flag(researcher):
    survey = _writing_survey(researcher)
    assignment = services.assignment_claim(survey=survey, worker_id="noscript")
    answers = {
        item.pk: {"scores": {}, "seconds": None, "text": PASTED, "telemetry": ""}
        for item in services.assignment_items(assignment=assignment)
    }
    services.assignment_submit(assignment=assignment, answers=answers)
    rows = written_rows(survey)
    assert [row["telemetry"] for row in rows] == [None, None]
    flags = reply_flags(rows)
    assert all(set(found) == {"near_duplicate"} for found in flags.values()), "not recorded is not clean either"


def test_the_pasted_reply_is_flagged_with_its_evidence_and_the_typed_one_is_not(researcher):
    survey = _writing_survey(researcher)
    _submit(survey, "typist", [TYPED, TYPED.replace("beach", "park")], typed_telemetry)
    _submit(survey, "paster", [PASTED, PASTED.replace("beach", "lake")], pasted_telemetry)
    section = survey_integrity(survey)
    workers = {w["worker"]: w for w in section["workers"]}
    assert workers["paster"]["reply_flags"]["mostly_pasted"] == {"raised": 2, "of": 2, "words": "mostly pasted"}
    assert workers["paster"]["reply_shares"]["mostly_pasted"] == 1.0
    assert workers["paster"]["flagged"] and not workers["typist"]["flagged"]
    assert workers["typist"]["reply_flags"]["mostly_pasted"]["raised"] == 0
    flagged = section["flagged_replies"]
    assert {f["worker"] for f in flagged} == {"paster"}
    evidence = flagged[0]["flags"][0]
    # 83 characters pasted of 83: a share of exactly 1, one paste event, no key pressed.
    assert evidence["name"] == "mostly_pasted"
    assert evidence["evidence"]["pasted_share"] == 1.0
    assert evidence["evidence"]["pasted_chars"] == len(PASTED) == 83
    assert evidence["evidence"]["keystrokes"] == 0 and evidence["evidence"]["paste_events"] == 1
    assert section["n_replies"] == 4 and section["n_with_telemetry"] == 4


def test_a_copy_of_another_workers_earlier_reply_is_a_near_duplicate_naming_the_original(researcher):
    survey = _writing_survey(researcher)
    original = _submit(
        survey, "first", [TYPED, "Tea with friends sounds like the nicest plan for a rainy day."], typed_telemetry
    )
    _submit(
        survey, "second", [TYPED, "Honestly I would rather stay home and read my new novel tonight."], typed_telemetry
    )
    section = survey_integrity(survey)
    flagged = section["flagged_replies"]
    assert [(f["worker"], [x["name"] for x in f["flags"]]) for f in flagged] == [("second", ["near_duplicate"])]
    evidence = flagged[0]["flags"][0]["evidence"]
    first_reply = WrittenResponse.objects.get(assignment=original, text=TYPED)
    assert evidence["other_answer"] == first_reply.pk
    assert evidence["other_worker"] == "first" and evidence["identical_words"] is True


def test_a_straight_lining_rater_is_flagged_and_competence_ranks_them_below_the_careful(researcher):
    survey = make_survey(
        researcher, n_contexts=12, name="raters", contexts_per_hit=12, assignments_per_hit=3, attention_checks_per_hit=0
    )
    careful_scores = {}
    for worker in ("careful-1", "careful-2", "liner"):
        assignment = services.assignment_claim(survey=survey, worker_id=worker)
        answers = {}
        for item in services.assignment_items(assignment=assignment):
            # Careful raters agree: each response's score follows its position in its context (1..5).
            score = careful_scores.setdefault(item.response_id, 1 + item.response_id % 5)
            answers[item.pk] = {"scores": {"overall": str(3 if worker == "liner" else score)}, "seconds": "6"}
        services.assignment_submit(assignment=assignment, answers=answers)
    report = quality_recompute(survey=survey).data
    workers = {w["worker"]: w for w in report["integrity"]["workers"]}
    liner_flags = {f["name"]: f for f in workers["liner"]["rating_flags"]}
    assert {"straight_lining", "near_zero_variance"} <= set(liner_flags)
    n = len(careful_scores)
    assert liner_flags["straight_lining"]["evidence"]["most_frequent_share"] == 1.0
    assert liner_flags["straight_lining"]["evidence"]["answers"] == n
    assert liner_flags["near_zero_variance"]["evidence"]["sd"] == 0.0
    assert not workers["careful-1"]["rating_flags"]
    assert workers["liner"]["competence"]["mace"] < workers["careful-1"]["competence"]["mace"]
    assert workers["liner"]["competence"]["dawid_skene"] < workers["careful-2"]["competence"]["dawid_skene"]
    # A 1-5 rating survey: the ordinal spammer model estimates too, and it is the one the rule reads.
    assert workers["liner"]["competence"]["ordinal"] < workers["careful-1"]["competence"]["ordinal"]
    assert {w["competence"]["model"] for w in workers.values()} == {"ordinal"}
    assert report["integrity"]["competence_model"] == "ordinal spammer model"


def test_the_pasted_rule_excludes_a_worker_above_the_share_and_records_the_decision(researcher):
    from annotation.models import ExclusionDecision

    survey = _writing_survey(researcher, max_pasted_share=0.5)
    _submit(survey, "typist", [TYPED, TYPED.replace("beach", "park")], typed_telemetry)

    # One of two replies pasted: a share of 0.5 is not above 0.5, so this worker stays.
    def half_pasted(text):
        return pasted_telemetry(text) if text == PASTED else typed_telemetry(text)

    _submit(survey, "halfway", [PASTED, "I think the museum is a calm choice when it rains all day."], half_pasted)
    report = quality_recompute(survey=survey).data
    entries = {a["worker"]: a for a in report["annotators"]}
    assert not entries["typist"]["excluded"] and not entries["halfway"]["excluded"]
    assert entries["halfway"]["integrity"] == {
        "pasted_replies": 1,
        "telemetry_replies": 2,
        "competence": None,
        "competence_model": None,
    }
    survey.max_pasted_share = 0.4
    survey.save()
    report = quality_recompute(survey=survey).data
    entries = {a["worker"]: a for a in report["annotators"]}
    assert entries["halfway"]["excluded"] and not entries["typist"]["excluded"]
    reason = entries["halfway"]["reasons"][0]
    assert reason["rule"] == "pasted" and reason["value"] == 0.5 and reason["threshold"] == 0.4
    assert reason["detail"] == "1 of 2 written replies flagged mostly pasted (50%), above 0.4"
    decision = ExclusionDecision.objects.filter(survey=survey, annotator__worker_id="halfway").last()
    assert decision.source == "auto" and decision.excluded and decision.reasons[0]["rule"] == "pasted"


def test_the_competence_rule_excludes_the_straight_liner_and_the_audit_can_replay_it(researcher, researcher_client):
    from django.urls import reverse

    from annotation.quality import whatif

    survey = rated_by_two_careful_raters_and_a_straight_liner(researcher, kappa_threshold=-1.0, min_competence=0.5)
    report = quality_recompute(survey=survey).data
    entries = {a["worker"]: a for a in report["annotators"]}
    assert [r["rule"] for r in entries["liner"]["reasons"]] == ["competence"]
    # On a rating scale the rule reads the ordinal spammer model's θ and says so.
    ordinal = {w["worker"]: w["competence"]["ordinal"] for w in report["integrity"]["workers"]}
    reason = entries["liner"]["reasons"][0]
    assert reason["value"] == ordinal["liner"] < 0.5 <= min(ordinal["careful-1"], ordinal["careful-2"])
    assert reason["detail"] == f"estimated competence (ordinal spammer model) {ordinal['liner']:.2f}, below 0.5"
    assert not entries["careful-1"]["excluded"] and not entries["careful-2"]["excluded"]
    stored = whatif.stored_evidence(report)
    off = whatif.settings_of(survey).varied(min_competence=None)
    assert whatif.excluded_under(stored, whatif.settings_of(survey)) == {entries["liner"]["annotator_id"]}
    assert whatif.excluded_under(stored, off) == set(), "the audit shows what the rule changes"
    # The quality page names the model the rule read and shows its estimate beside MACE's and Dawid-Skene's.
    page = researcher_client.get(reverse("annotation:quality_survey", args=[survey.pk])).content.decode()
    assert "exclude a worker whose competence (ordinal spammer model) is below 0.5" in page
    assert 'data-label="Competence (ordinal model)">' + f"{ordinal['careful-1']:.2f}</td>" in page
