"""The report's Conversations section in real headless Chromium, on a phone and a laptop: every
table shown, none wider than the window (wide ones scroll in their box)."""

import io
import os
import random
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.services.conversation_answers import conversation_judgements_import, conversation_ratings_import
from annotation.services.conversations import conversations_import
from tests.analysis.test_browser import page, page_width  # noqa: F401 (the Chromium page fixture)
from tests.annotation.conversation_files import conversation, jsonl
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SYSTEMS = ("blenderbot-3b", "meena-like", "seq2seq-baseline", "retrieval")
QUESTIONS = ("Who would you prefer to talk to for a long conversation?", "Which speaker sounds more human?")


@pytest.fixture
def study(researcher, settings, tmp_path):
    """Four systems, 15 conversations each: two annotators rate each whole and flag turns, ACUTE pairs."""
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 100
    settings.MEDIA_ROOT = tmp_path
    rng = random.Random(4)
    records, whole, turns, pairs = [], [], [], []
    for s, system in enumerate(SYSTEMS):
        for k in range(15):
            # the systems differ in length, questions and repetition, so their metrics differ
            texts = [f"question {i} about topic {k}?" if i % 2 == 0 else
                     " ".join([f"answer {i % (2 + s)}"] * (1 + s) + (["why?"] if (i + s) % 3 == 0 else []))
                     for i in range(6 + (k + s) % 5)]  # fmt: skip
            records.append(conversation(f"{system}-{k}", system, texts, seed=f"topic-{k}"))
            for worker in ("w1", "w2"):
                base = 4 - s + rng.choice((-1, 0, 0, 1))
                whole.append({"conversation_id": f"{system}-{k}", "worker": worker, "aspect": "overall",
                              "score": min(5, max(1, base))})  # fmt: skip
                whole.append({"conversation_id": f"{system}-{k}", "worker": worker, "aspect": "engaging",
                              "score": min(3, max(1, base - 1))})  # fmt: skip
                for turn in range(1, len(texts), 2):
                    flag = 1 if rng.random() < 0.1 + 0.1 * s else 0
                    turns.append({"conversation_id": f"{system}-{k}", "turn": turn, "worker": worker,
                                  "aspect": "repetitive", "score": flag})  # fmt: skip
    for k in range(15):
        for first, second in ((0, 1), (1, 2), (2, 3), (0, 3)):
            for question in QUESTIONS:
                winner = "a" if rng.random() < 0.7 else rng.choice(("b", "tie"))
                pairs.append({"conversation_a": f"{SYSTEMS[first]}-{k}", "conversation_b": f"{SYSTEMS[second]}-{k}",
                              "worker": f"j{k % 3}", "winner": winner, "question": question})  # fmt: skip
    dataset = conversations_import(file=jsonl(records), name="chatbots-2026", owner=researcher)
    conversation_ratings_import(file=jsonl(whole + turns), dataset=dataset,
                                scales={"overall": (1, 5), "engaging": (1, 3), "repetitive": (0, 1)})  # fmt: skip
    conversation_judgements_import(file=jsonl(pairs), dataset=dataset)
    call_command("compute_conversation_metrics", "--dataset", dataset.name, stdout=io.StringIO())
    return dataset


@pytest.mark.parametrize("window", [(1366, 900), (390, 844)])
def test_the_conversations_section_fits_the_window(live_server, page, study, researcher, window):  # noqa: F811
    width, height = window
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{live_server.url}/analysis/datasets/{study.pk}/report/")
    page.fill("input[name=username]", researcher.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_selector("#t-conversation_systems")
    page.wait_for_load_state("load")
    for name in ("conversation_ranking", "conversation_flags", "conversation_acute", "conversation_agreement",
                 "conversation_metrics", "conversation_metrics_system"):  # fmt: skip
        assert page.locator(f"#t-{name}").is_visible(), name
    assert page.locator("section[aria-labelledby=t-conversation_acute] tbody tr").count() == 2 * 4
    assert page_width(page) <= width
    shots = os.environ.get("RATELAB_SHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        page.locator("#t-conversation_systems").scroll_into_view_if_needed()
        page.screenshot(path=f"{shots}/conversation-report-{width}.png", full_page=True)
        page.screenshot(path=f"{shots}/conversation-report-{width}-section.png")
        page.goto(f"{live_server.url}/datasets/{study.pk}/conversations/")
        assert page_width(page) <= width
        page.screenshot(path=f"{shots}/conversation-list-{width}.png")
