"""A conversation HIT's turn budget: long conversations do not pile onto one page (issue 37's
page < 150 KB; measured in bench/bench_conversation_page.py)."""

import pytest

from annotation import services
from annotation.kinds.conversation.layout import TURN_BUDGET, chunk_by_turns
from annotation.models import ConversationTurn, HITItem
from annotation.services.conversations import conversations_import
from tests.annotation.conversation_files import conversation, jsonl


def test_chunks_close_at_the_size_or_the_turn_budget_and_a_long_unit_stands_alone():
    turns = {"a": 10, "b": 10, "c": 100, "d": 10, "e": 10, "f": 10}
    chunks = chunk_by_turns(list(turns), turns.get, 3)
    budget = TURN_BUDGET * 3 * sum(turns.values()) / len(turns)  # 1.1 * 3 * 25 = 82.5
    assert chunks == [["a", "b"], ["c"], ["d", "e", "f"]]
    assert all(sum(map(turns.get, chunk)) <= budget or len(chunk) == 1 for chunk in chunks)
    even = dict.fromkeys("abcdefg", 10)
    assert chunk_by_turns(list(even), even.get, 3) == [["a", "b", "c"], ["d", "e", "f"], ["g"]]  # as before


@pytest.mark.django_db
def test_a_survey_of_uneven_conversations_keeps_each_hits_turns_within_the_budget(researcher):
    lengths = [4, 4, 40, 4, 4, 4, 4, 30, 4, 4, 4, 4]
    records = [conversation(f"c{i}", f"bot{i % 2}", [f"t{i}-{j}" for j in range(n)]) for i, n in enumerate(lengths)]
    dataset = conversations_import(file=jsonl(records), name="uneven", owner=researcher)
    survey = services.survey_create(dataset=dataset, name="uneven", owner=researcher, task_type="conversation",
                                    contexts_per_hit=4, attention_checks_per_hit=0)  # fmt: skip
    budget = TURN_BUDGET * 4 * sum(lengths) / len(lengths)
    seen = []
    for hit in survey.hits.all():
        ids = list(hit.items.filter(kind=HITItem.Kind.CONVERSATION).values_list("conversation_id", flat=True))
        n_turns = ConversationTurn.objects.filter(conversation_id__in=ids).count()
        assert len(ids) <= 4 and (n_turns <= budget or len(ids) == 1)
        seen += ids
    assert sorted(seen) == sorted(dataset.conversations.values_list("pk", flat=True))  # each conversation once
