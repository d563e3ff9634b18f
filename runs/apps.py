from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "runs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Deleting a circuit deletes its runs first (they protect its versions) and
        # stops the active ones once the delete commits.
        from circuits.signals import circuit_deleting

        from .lifecycle import delete_runs_of

        circuit_deleting.connect(delete_runs_of, dispatch_uid="runs.delete_runs_of")
