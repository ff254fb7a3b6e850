"""Writing surveys created with the rating instructions (the default before task types had their
own) get the writing instructions, so their annotators are no longer told to judge candidate
replies. Surveys whose researcher wrote their own instructions are left alone. The texts are
copied here, as they were when this migration was written."""

from django.db import migrations

RATING_DEFAULT = (
    "You will read short conversations. For each candidate next turn, judge how appropriate it is "
    "as a reply to the conversation so far. Some items are attention checks: read every item."
)
WRITE_INSTRUCTIONS = (
    "You will read short conversations. For each one, write the next turn: a reply that fits the "
    "conversation so far, in your own words, as a person taking part in it would."
)


def forwards(apps, schema_editor):
    Survey = apps.get_model("annotation", "Survey")
    Survey.objects.filter(task_type="write", instructions=RATING_DEFAULT).update(instructions=WRITE_INSTRUCTIONS)


class Migration(migrations.Migration):
    dependencies = [("annotation", "0015_admin_names")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
