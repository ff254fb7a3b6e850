"""The scoring API refuses every body it cannot read with 400 and a JSON message, deeply nested
JSON included (it answered 500, a RecursionError: security review 2026-11-29, point 5); the
shared parser behind it and the Prolific webhook."""

import pytest
from django.test import Client
from django.urls import reverse

from config.security.json_input import MAX_JSON_DEPTH, json_depth, json_loads
from scoring.models import AdemModel
from scoring.services.tokens import api_token_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def model(researcher):
    # The body is read before anything is scored: an untrained row is enough to reach it.
    return AdemModel.objects.create(name="mine", owner=researcher)


def post(model, key, raw):
    url = reverse("scoring:adem_model_score", args=[model.pk])
    return Client().post(url, data=raw, content_type="application/json", headers={"Authorization": f"Bearer {key}"})


@pytest.mark.parametrize(
    "raw",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"triples": ' + "[" * 100_000 + "]" * 100_000 + "}",
        '{"triples": [' + "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1) + "]}",
        b'{"triples": "\xff"}',
    ],
    ids=["nested_100000_deep", "nested_100000_deep_in_triples", "nested_past_the_limit", "not_utf8"],
)
def test_a_body_nested_too_deep_or_not_utf8_is_refused_with_400_and_a_json_message(model, researcher, raw):
    answer = post(model, api_token_create(user=researcher, name="cli"), raw)
    assert answer.status_code == 400
    assert answer.json()["error"].startswith("body is not JSON: ")


def test_the_parser_names_why_and_takes_what_real_payloads_hold():
    assert json_loads('{"a": [[1]]}') == {"a": [[1]]}
    assert json_loads(b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH) is not None
    for raw, reason in (
        ("[" * 100_000 + "]" * 100_000, f"JSON nested deeper than {MAX_JSON_DEPTH} levels"),
        ("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1), f"JSON nested deeper than {MAX_JSON_DEPTH} levels"),
        ("{not json", "broken JSON: Expecting property name enclosed in double quotes (column 2)"),
        (b"\xff", "the body is not UTF-8"),
    ):
        with pytest.raises(ValueError) as refused:
            json_loads(raw)
        assert str(refused.value) == reason
    # None: only what the parser cannot take is refused (import files name the deep field themselves)
    assert json_loads("[" * 200 + "]" * 200, max_depth=None) is not None


def test_depth_counts_lists_and_objects_without_recursion():
    assert json_depth(3) == 0
    assert json_depth({"a": [1, {"b": []}]}) == 4
    deep = []
    for _ in range(100_000):
        deep = [deep]
    assert json_depth(deep, limit=10) == 11
