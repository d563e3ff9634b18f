from django.apps import AppConfig


class ConnectorsConfig(AppConfig):
    name = "connectors"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from . import cleanup  # noqa: F401 - its receiver drops what a deleted connector kept outside
        from . import signals  # noqa: F401 - a new run gets its document's connectors
        from .registry import hand_kinds_to_the_engine

        hand_kinds_to_the_engine()
