"""The dataset list and page say what a dataset holds: contexts, conversations or both (issue 37)."""

import re

import pytest
from django.urls import reverse

from annotation.services.conversations import conversations_import
from tests.annotation.conversation_files import conversation, jsonl
from tests.annotation.conversation_study_helpers import conversation_records

pytestmark = pytest.mark.django_db


def _cell(page, name):
    row = page.split(f">{name}</a>", 1)[1].split("</tr>", 1)[0]
    return re.sub(r"\s+", " ", re.findall(r'<td class="num">(.*?)</td>', row, re.S)[0]).strip()


def test_a_conversation_dataset_is_listed_with_its_conversations_not_0_contexts(researcher_client, researcher):
    conversations_import(file=jsonl(conversation_records(n=4)), name="chats", owner=researcher)  # 2 systems x 4
    conversations_import(file=jsonl([conversation("one", "bot", ["hi", "hello"])]), name="single", owner=researcher)
    page = researcher_client.get(reverse("annotation:dataset_list")).content.decode()
    assert _cell(page, "chats") == "8 conversations"
    assert _cell(page, "single") == "1 conversation"
    assert "0 contexts" not in page
    dataset_page = researcher_client.get(reverse("annotation:dataset_detail", args=[_pk(page, "chats")])).content
    assert b"8 conversations" in dataset_page and b"0 contexts" not in dataset_page
    assert b'<span class="step-state">8 conversations, 2 systems' in dataset_page  # the pipeline bar too


def _pk(page, name):
    return int(re.search(rf'/datasets/(\d+)/">{name}</a>', page).group(1))
