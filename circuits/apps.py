from django.apps import AppConfig


class CircuitsConfig(AppConfig):
    name = "circuits"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Access narrowed or the circuit deleted: the shared document's sockets recheck it.
        from django.db import transaction

        from .collab.consumer import access_changed
        from .signals import circuit_access_changed, circuit_deleting

        circuit_access_changed.connect(access_changed, dispatch_uid="circuits.collab.access_changed")

        def deleting(sender, circuit, **kwargs):
            circuit_id = circuit.pk
            transaction.on_commit(lambda: access_changed(sender, circuit_id=circuit_id))

        circuit_deleting.connect(deleting, dispatch_uid="circuits.collab.deleting", weak=False)
