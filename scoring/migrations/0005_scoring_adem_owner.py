"""Every ADEM model gets an owner; names become unique per owner; VHRED checkpoints are content-addressed.

Existing models without an owner are given the owner of the dataset they were trained on, else the
owner of the run that trained them, else the first superuser (by id). If none of these exists the
migration stops with a message rather than invent an account: create a superuser, then migrate again.
`vhred_sha256` stays blank for models trained before this change: they keep reading the legacy
`adem/vhred/vhred.ckpt`, which pretraining no longer writes.
"""

import django.core.validators
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def give_every_model_an_owner(apps, schema_editor):
    AdemModel = apps.get_model("scoring", "AdemModel")
    TrainingRun = apps.get_model("scoring", "TrainingRun")
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    superuser = User.objects.filter(is_superuser=True).order_by("pk").first()
    for model in AdemModel.objects.filter(owner__isnull=True):
        run = TrainingRun.objects.filter(adem_model=model, owner__isnull=False).order_by("pk").first()
        owner_id = (model.dataset.owner_id if model.dataset_id else None) or (run.owner_id if run else None)
        if owner_id is None and superuser is not None:
            owner_id = superuser.pk
        if owner_id is None:
            raise RuntimeError(
                f"ADEM model {model.name!r} has no owner, no dataset owner and no training run owner, and "
                "there is no superuser to give it to: run `manage.py createsuperuser`, then migrate again"
            )
        model.owner_id = owner_id
        model.save(update_fields=["owner"])


class Migration(migrations.Migration):
    dependencies = [
        ("scoring", "0004_workers_run_heartbeat"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="ademmodel",
            name="vhred_sha256",
            field=models.CharField(
                blank=True,
                help_text="VHRED encoder checkpoint (content hash) the model was trained with; blank: not VHRED, "
                "or trained before checkpoints were content-addressed (then the legacy vhred.ckpt).",
                max_length=64,
            ),
        ),
        migrations.AlterField(
            model_name="ademmodel",
            name="name",
            field=models.CharField(
                max_length=100,
                validators=[
                    django.core.validators.RegexValidator(
                        "^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$",
                        "Use letters, digits, '.', '_' and '-' (it names a file and a URL), "
                        "starting with a letter or digit.",
                    )
                ],
            ),
        ),
        migrations.RunPython(give_every_model_an_owner, migrations.RunPython.noop),
    ]
