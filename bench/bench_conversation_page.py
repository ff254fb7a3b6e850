#!/usr/bin/env python
"""Benchmark: the size of an annotator's conversation page (issue 37: < 150 KB) on DSTC9's
interactive-evaluation dialogues (../shared/data/dstc9_interactive, ~34 turns each), for the
conversation kind (per-turn flags and whole-conversation aspects) and the ACUTE kind.

Every HIT of a survey is claimed by its own annotator through the survey link (start page, Start,
the task page), as a person would, and the task page's bytes are counted (the HTML, uncompressed;
gzip's size beside it). Prints min / median / p99 / max KB and where the bytes go on the largest
page (turn text, per-turn questions, the rest).

    .venv/bin/python bench/bench_conversation_page.py [--per-hit 6] [--hits 40]
"""

import argparse
import gzip
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-hit", type=int, default=6, help="Conversations (or pairs) per HIT.")
    parser.add_argument("--hits", type=int, default=40, help="HITs whose page is measured.")
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "dstc9_interactive"))
    args = parser.parse_args()
    db = Path(tempfile.mkdtemp()) / "page.sqlite3"
    os.environ["DATABASE_URL"] = f"sqlite:///{db}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)
    from annotation import services
    from annotation.importing.dstc9 import convert, write_jsonl
    from annotation.services.conversations import conversations_import

    conversations, _ratings = convert(Path(args.data))
    path = db.parent / "c.jsonl"
    write_jsonl(conversations, path)
    dataset = conversations_import(file=path, name="dstc9")
    turns = [len(c["turns"]) for c in conversations]
    print(f"DSTC9: {len(conversations)} conversations, mean {statistics.mean(turns):.1f} turns (max {max(turns)})")
    for task_type in ("conversation", "acute"):
        survey = services.survey_create(
            dataset=dataset, name=f"page-{task_type}", owner=None, task_type=task_type, contexts_per_hit=args.per_hit,
            assignments_per_hit=1, attention_checks_per_hit=1, new_annotators_per_address_hour=100_000,
        )  # fmt: skip
        survey = services.survey_launch(survey=survey)
        sizes, largest = [], ""
        for n in range(min(args.hits, survey.hits.count())):
            html = _task_page(survey, f"{task_type}-w{n}")
            sizes.append(len(html.encode()))
            if len(html) > len(largest):
                largest = html
        sizes.sort()
        p99 = sizes[min(len(sizes) - 1, round(0.99 * (len(sizes) - 1)))]
        print(
            f"{task_type}: {len(sizes)} pages of {args.per_hit} + 1 check: min {sizes[0] / 1e3:.0f} KB, median "
            f"{statistics.median(sizes) / 1e3:.0f} KB, p99 {p99 / 1e3:.0f} KB, max {sizes[-1] / 1e3:.0f} KB "
            f"(gzip {len(gzip.compress(largest.encode())) / 1e3:.0f} KB); "
            f"over 150 KB: {sum(s > 150_000 for s in sizes)}"
        )
        _breakdown(largest)
        if os.environ.get("SAVE_PAGE"):
            Path(os.environ["SAVE_PAGE"] + f"-{task_type}.html").write_text(largest)


def _task_page(survey, worker):
    from django.test import Client

    client = Client()
    link = f"/s/{survey.token}/"
    client.get(link)
    response = client.post(link, {"action": "start", "worker": worker}, follow=True)
    return response.content.decode()


def _breakdown(html):
    """Where the bytes of a page go: the turns' text, the inputs and labels, the rest."""
    total = len(html.encode())
    text = sum(len(m.encode()) for m in re.findall(r'<span class="text"[^>]*>(.*?)</span>', html, re.S))
    inputs = sum(len(m.encode()) for m in re.findall(r"<input[^>]*>", html))
    labels = sum(len(m.encode()) for m in re.findall(r"<label[^>]*>.*?</label>", html, re.S))
    print(f"  largest page {total / 1e3:.0f} KB: turn text {text / 1e3:.0f} KB, <input> tags {inputs / 1e3:.0f} KB, "
          f"<label>s {labels / 1e3:.0f} KB, other markup {(total - text - labels) / 1e3:.0f} KB")  # fmt: skip


if __name__ == "__main__":
    main()
