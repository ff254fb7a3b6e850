"""DSTC9's interactive-evaluation dialogues imported through the commands, as the DSTC9 tests start."""

import io

from django.core.management import call_command

from annotation.importing.dstc9 import convert, write_jsonl
from annotation.models import Dataset


def import_dstc9(shared_data, tmp_path, owner):
    """The release converted, then imported with its scales as released (overall 1-5, consistent 0-1,
    the other aspects 1-3) into a dataset "dstc9" of `owner`."""
    conversations, ratings = convert(shared_data / "dstc9_interactive")
    write_jsonl(conversations, tmp_path / "c.jsonl")
    write_jsonl(ratings, tmp_path / "r.jsonl")
    out = io.StringIO()
    call_command(
        "import_conversations", str(tmp_path / "c.jsonl"), "--name", "dstc9", "--owner", owner.username, stdout=out
    )
    call_command(
        "import_conversation_ratings", str(tmp_path / "r.jsonl"), "--dataset", "dstc9",
        "--scale", "overall=1-5", "--scale", "consistent=0-1", "--scale-min", "1", "--scale-max", "3", stdout=out,
    )  # fmt: skip
    return Dataset.objects.get(name="dstc9")
