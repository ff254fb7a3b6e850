"""The simulated crowd: seeded, mixed roles, and telemetry and texts that match what each role did."""

from collections import Counter

import pytest

from annotation.quality.integrity.similarity import overlap, word_ngrams
from annotation.quality.integrity.simulation import CrowdSpec, simulate_crowd
from annotation.quality.integrity.writing_flags import TELEMETRY_FIELDS

SMALL = CrowdSpec(workers={"careful": 10, "careless": 2, "straight_liner": 2, "paster": 4, "copier": 3},
                  contexts=10, replies_per_worker=4, rating_items=60, ratings_per_worker=20,
                  pairs=40, pairs_per_worker=15)


@pytest.fixture(scope="module")
def study():
    return simulate_crowd(SMALL, seed=7)


def test_the_same_seed_gives_the_same_study_and_another_seed_another(study):
    again = simulate_crowd(SMALL, seed=7)
    assert again.replies == study.replies and again.ratings == study.ratings and again.choices == study.choices
    assert simulate_crowd(SMALL, seed=8).ratings != study.ratings


def test_the_crowd_has_the_requested_roles_mixed_among_worker_ids(study):
    assert Counter(w.role for w in study.workers) == SMALL.workers
    roles_in_id_order = [w.role for w in sorted(study.workers, key=lambda w: w.worker)]
    assert roles_in_id_order != sorted(roles_in_id_order, key=["careful", "careless", "straight_liner",
                                                                "paster", "copier"].index)
    assert all(w.noise == 1.0 for w in study.workers if w.role == "straight_liner")
    assert all(w.paste_method in {"clipboard", "auto_typer", "script"} for w in study.workers if w.role == "paster")


def test_every_reply_has_full_telemetry_that_adds_up(study):
    assert len(study.replies) == sum(SMALL.workers.values()) * SMALL.replies_per_worker
    for reply in study.replies:
        telemetry = reply["telemetry"]
        assert set(telemetry) == set(TELEMETRY_FIELDS)
        assert telemetry["final_length"] == len(reply["text"])
        if "pasted" in reply["truth"]:
            assert telemetry["paste_events"] >= 1


def test_copied_replies_come_after_their_source_and_keep_most_of_its_trigrams(study):
    by_answer = {r["answer"]: r for r in study.replies}
    copied = [r for r in study.replies if "copied" in r["truth"]]
    assert copied
    for reply in copied:
        earlier = [r for r in by_answer.values() if r["context"] == reply["context"]
                   and r["submitted_at"] < reply["submitted_at"] and r["worker"] != reply["worker"]]
        best = max(overlap(word_ngrams(reply["text"], 2), word_ngrams(r["text"], 2))[1] or 0 for r in earlier)
        assert best > 0.3
    assert all(study.role_of(r["worker"]) == "copier" for r in copied)


def test_straight_liners_rate_one_value_and_always_pick_the_left_reply(study):
    for worker in (w.worker for w in study.workers if w.role == "straight_liner"):
        scores = [s for w, _, s in study.ratings if w == worker]
        assert Counter(scores).most_common(1)[0][1] >= 0.8 * len(scores)
        assert set(study.sides[worker]) == {"left"}


def test_ratings_and_choices_cover_the_planned_sizes(study):
    assert len(study.ratings) == sum(SMALL.workers.values()) * SMALL.ratings_per_worker
    assert len(study.choices) == sum(SMALL.workers.values()) * SMALL.pairs_per_worker
    assert {s for _, _, s in study.ratings} <= {1, 2, 3, 4, 5}
    assert {c for _, _, c in study.choices} == {"A", "B"}
