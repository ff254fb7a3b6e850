from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # System checks register on import; they read models, so only once apps are ready.
        from annotation import checks  # noqa: F401
