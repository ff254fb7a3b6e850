"""Second half of 0004 (its own transaction: PostgreSQL refuses ALTER TABLE on a table with pending
deferred foreign-key checks from the owners 0004 just wrote): owner required, names unique per owner."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("scoring", "0005_scoring_adem_owner"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="ademmodel",
            name="owner",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="adem_models",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddConstraint(
            model_name="ademmodel",
            constraint=models.UniqueConstraint(fields=("owner", "name"), name="ademmodel_unique_name_per_owner"),
        ),
        migrations.AlterModelOptions(
            name="ademmodel",
            options={"ordering": ["-created_at"], "verbose_name": "ADEM model"},
        ),
        migrations.AlterModelOptions(
            name="trainingrun",
            options={"ordering": ["-created_at"], "verbose_name": "ADEM run"},
        ),
        migrations.AlterModelOptions(
            name="apitoken",
            options={"ordering": ["-created_at"], "verbose_name": "API token"},
        ),
    ]
