"""Launches that went for a Prolific draft are counted, so a later launch knows an earlier one may
have sent the create-draft POST (a worker killed mid-request records nothing else). Numbered 0019
after 0018; the lead renumbers at merge."""

from django.db import migrations, models


def count_earlier_attempts(apps, schema_editor):
    # A row without a draft id but with a tag may have had its draft asked for before this field
    # existed (the tag is saved first): its next launch must look on Prolific before creating.
    ProlificStudy = apps.get_model("annotation", "ProlificStudy")
    ProlificStudy.objects.filter(study_id="").exclude(draft_tag="").update(draft_attempts=1)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0018_prolific_draft_tag_and_study_code"),
    ]

    operations = [
        migrations.AddField(
            model_name="prolificstudy",
            name="draft_attempts",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunPython(count_earlier_attempts, migrations.RunPython.noop),
    ]
