from django.apps import AppConfig


class WorkersConfig(AppConfig):
    name = "workers"

    def ready(self):
        """Register the workers as what executes runs (runs/dispatch.py, the one seam
        between the runs layer and this one): Celery tasks sent to the right queue."""
        from runs import dispatch as seam

        from . import dispatch, leases

        seam.register(seam.Workers(start=dispatch.start, stop=dispatch.stop, wake=dispatch.wake,
                                   worker_of=leases.worker_of, verify=dispatch.verify,
                                   explain=dispatch.explain, inspect=dispatch.inspect,
                                   claim_wake=dispatch.claim_wake))
