"""The dataset pages of conversations: upload, counts per system, the list and one conversation (issue 37)."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Conversation, Dataset
from annotation.services.conversation_answers import conversation_ratings_import
from annotation.services.conversations import conversations_import
from tests.annotation.conversation_files import conversation, conversations_csv, jsonl, small_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def chats(researcher):
    return conversations_import(file=jsonl(small_study()), name="chats", owner=researcher)


def _upload(client, content, name="chats.jsonl", dataset_name="uploaded"):
    return client.post(
        reverse("annotation:dataset_upload"),
        {"name": dataset_name, "file": SimpleUploadedFile(name, content), "format": "", "description": ""},
    )


@pytest.mark.parametrize(
    ("filename", "content"), [("c.jsonl", jsonl(small_study())), ("c.csv", conversations_csv(small_study()))]
)
def test_the_upload_page_takes_a_conversations_file(researcher_client, researcher, filename, content):
    response = _upload(researcher_client, content, filename)
    dataset = Dataset.objects.get(name="uploaded")
    assert response.status_code == 302 and response.url == reverse("annotation:dataset_detail", args=[dataset.pk])
    assert dataset.owner == researcher
    assert dataset.conversations.count() == 3


def test_the_upload_page_lists_every_problem_of_a_conversations_file(researcher_client):
    lines = [
        json.dumps(conversation("d1", "meena", ["a", "b"])),
        '{"conversation_id": "d2", "turns": []}',
        '{"conversation_id": "d3"}',
    ]
    response = _upload(researcher_client, "\n".join(lines).encode())
    page = response.content.decode()
    assert response.status_code == 200
    assert "2 errors in the file. Nothing was imported." in page
    assert "line 2, field &#x27;system&#x27;: missing" in page
    assert "line 3, field &#x27;system&#x27;: missing" in page
    assert not Dataset.objects.exists()


def test_the_upload_page_still_takes_a_dataset_of_contexts(researcher_client):
    record = {"context_id": "c1", "context": ["Hi"], "responses": [{"system": "s", "text": "Hello"}]}
    _upload(researcher_client, (json.dumps(record) + "\n").encode())
    assert Dataset.objects.get(name="uploaded").contexts.count() == 1


def test_the_dataset_page_counts_conversations_and_turns_per_system(researcher_client, chats):
    page = researcher_client.get(reverse("annotation:dataset_detail", args=[chats.pk])).content.decode()
    assert 'id="conversations-per-system"' in page
    assert 'id="contexts"' not in page  # a dataset of conversations only lists no contexts
    table = page[page.index('id="conversations-per-system"') :]
    table = table[: table.index("</table>")]
    # blender: d2 (4 turns, 2 of the system) and d3 (2 turns, 1); meena: d1 (4 turns, 2).
    blender = table[table.index(">blender<") :]
    assert [cell.split("<")[0] for cell in blender.split('class="num">')[1:4]] == ["2", "6", "3"]
    meena = table[table.index(">meena<") :]
    assert [cell.split("<")[0] for cell in meena.split('class="num">')[1:4]] == ["1", "4", "2"]


def test_a_dataset_of_contexts_shows_no_conversations_section(researcher_client, researcher):
    from annotation.services import dataset_import

    record = {"context_id": "c1", "context": ["Hi"], "responses": [{"system": "s", "text": "Hello"}]}
    dataset = dataset_import(file=(json.dumps(record) + "\n").encode(), name="ctx", owner=researcher)
    page = researcher_client.get(reverse("annotation:dataset_detail", args=[dataset.pk])).content.decode()
    assert 'id="conversations"' not in page
    assert 'id="contexts"' in page


def test_the_list_is_paginated_and_filtered_by_system(researcher_client, researcher):
    records = [conversation(f"c{i:02d}", "even" if i % 2 == 0 else "odd", ["hi", "hello"]) for i in range(60)]
    dataset = conversations_import(file=jsonl(records), name="many", owner=researcher)
    url = reverse("annotation:conversation_list", args=[dataset.pk])
    first = researcher_client.get(url).content.decode()
    assert "60 conversations" in first and "Page 1 of 3" in first
    assert ">c00<" in first and ">c24<" in first and ">c25<" not in first
    third = researcher_client.get(url, {"page": 3}).content.decode()
    assert ">c59<" in third and ">c49<" not in third
    odd = researcher_client.get(url, {"system": "odd"}).content.decode()
    assert "30 conversations of odd" in odd and ">c01<" in odd and ">c00<" not in odd


def test_a_conversations_page_shows_its_turns_escaped_with_their_ratings(researcher_client, researcher):
    record = conversation("x1", "bot", ["<script>alert(1)</script>", "<b>bold</b> reply"], seed="s<1>")
    dataset = conversations_import(file=jsonl([record]), name="esc", owner=researcher)
    conversation_ratings_import(
        file=jsonl(
            [
                {"conversation_id": "x1", "worker": "w1", "score": 4},
                {"conversation_id": "x1", "worker": "w2", "score": 5},
                {"conversation_id": "x1", "turn": 1, "worker": "w1", "aspect": "sensible", "score": 3},
            ]
        ),
        dataset=dataset,
    )
    target = Conversation.objects.get(dataset=dataset)
    page = researcher_client.get(
        reverse("annotation:conversation_detail", args=[dataset.pk, target.pk])
    ).content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert" not in page
    assert "&lt;b&gt;bold&lt;/b&gt; reply" in page
    assert "seed s&lt;1&gt;" in page
    assert 'class="turn system-turn" id="turn-1"' in page
    assert "4.50" in page  # the overall mean of the two whole-conversation ratings
    assert "sensible</span>3.00 (n=1)" in page


def test_conversation_pages_and_downloads_are_the_owners_only(client, researcher, other_researcher, chats):
    target = chats.conversations.first()
    urls = [
        reverse("annotation:conversation_list", args=[chats.pk]),
        reverse("annotation:conversation_detail", args=[chats.pk, target.pk]),
        reverse("annotation:conversations_download", args=[chats.pk, "jsonl"]),
    ]
    for url in urls:
        assert client.get(url).status_code == 302  # to the login page
    client.force_login(other_researcher)
    for url in urls:
        assert client.get(url).status_code == 404
    client.force_login(researcher)
    for url in urls:
        assert client.get(url).status_code == 200


def test_a_conversation_of_another_dataset_is_not_found_under_this_one(researcher_client, researcher, chats):
    other = conversations_import(file=jsonl(small_study()), name="other", owner=researcher)
    url = reverse("annotation:conversation_detail", args=[chats.pk, other.conversations.first().pk])
    assert researcher_client.get(url).status_code == 404


def test_the_download_is_the_export_format(researcher_client, chats):
    response = researcher_client.get(reverse("annotation:conversations_download", args=[chats.pk, "jsonl"]))
    assert "chats-conversations.jsonl" in response["Content-Disposition"]
    lines = [json.loads(line) for line in response.content.decode().splitlines()]
    assert lines[0] == small_study()[0]
