from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "runs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Deleting a circuit deletes its runs first (they protect its versions) and
        # stops the active ones once the delete commits.
        from circuits.signals import circuit_access_changed, circuit_deleting

        from .broadcast import access_changed
        from .lifecycle import delete_runs_of

        circuit_deleting.connect(delete_runs_of, dispatch_uid="runs.delete_runs_of")
        # Access narrowed (visibility, grants, share token): open websockets recheck it.
        circuit_access_changed.connect(access_changed, dispatch_uid="runs.access_changed")
