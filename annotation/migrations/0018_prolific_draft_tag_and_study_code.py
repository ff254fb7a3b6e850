"""A Prolific draft named uniquely (so a create whose answer was lost is found, not made twice), and
the completion code each submission was made with. Numbered 0018: 0017 is being added on main."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0017_assignment_replaced'),
    ]

    operations = [
        migrations.AddField(
            model_name='prolificstudy',
            name='draft_lost_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='prolificstudy',
            name='draft_tag',
            field=models.CharField(blank=True, max_length=16),
        ),
        migrations.AddField(
            model_name='prolificsubmission',
            name='study_code',
            field=models.CharField(blank=True, help_text='The completion code Prolific recorded for the submission, as last seen.', max_length=64),
        ),
    ]
