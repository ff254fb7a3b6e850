from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "scoring"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from annotation.extensions import register_response_extras  # apps are loaded only now
        from scoring.selectors import metric_extras

        # the dataset page and export_dataset show metric scores beside each response
        register_response_extras(metric_extras)
