"""A run's connectors: each source is attached to one input table, each sink to one
output view. A connector belongs to the run (not the circuit version): its position
(Kafka offsets, files applied) and a sink's last tick are facts about one run's input
log and ticks, and a new run of the same version starts from nothing."""
from __future__ import annotations

from django.conf import settings
from django.db import models

from .registry import is_source


class State(models.TextChoices):
    RUNNING = "running"
    RETRYING = "retrying"  # a transient error (broker away, lag full): tried again with backoff
    FAILED = "failed"  # a bad record or setting: stopped until the connector is replaced
    # "paused" is not stored: a connector is paused exactly when its run is (the API says so)


class Connector(models.Model):
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="connectors")
    name = models.CharField(max_length=64)
    kind = models.CharField(max_length=32)  # one of connectors/kinds.py
    node = models.CharField(max_length=64)  # the input table (source) or output view (sink)
    config = models.JSONField(default=dict)  # options; never a secret
    secrets = models.JSONField(default=dict)  # write-only options (passwords): never returned by the API
    #: secret option -> the name of the environment variable holding it, read on the worker
    #: when the client opens (the editor's and SQL's way: a document never holds a secret)
    secrets_env = models.JSONField(default=dict)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    # progress, written in the same transaction as what it counts
    position = models.JSONField(default=dict)  # source: where it resumes (Kafka: partition -> next offset; files: done)
    records_in = models.BigIntegerField(default=0)  # source: records pushed
    last_tick = models.IntegerField(default=-1)  # sink: the last tick written
    records_out = models.BigIntegerField(default=0)  # sink: records written
    state = models.CharField(max_length=16, choices=State.choices, default=State.RUNNING)
    errors = models.BigIntegerField(default=0)  # failures and transient errors so far (a metric: /metrics)
    last_error = models.TextField(blank=True, default="")
    error_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "name"]
        constraints = [models.UniqueConstraint(fields=["run", "name"], name="unique_run_connector")]

    @property
    def is_source(self) -> bool:
        return is_source(self.kind)

    def label(self) -> str:
        return f"connector {self.name!r} ({self.kind})"
