"""Runs of a circuit version, the durable input log of every pushed change, and the
output deltas each tick produced. The tables keep the names the circuits app gave them
(runs/migrations/0001_initial.py moved the models here without touching the data)."""
from __future__ import annotations

import json

from django.conf import settings
from django.db import models
from django.db.models import Q


class RunStatus(models.TextChoices):
    CREATED = "created"
    RUNNING = "running"
    PAUSED = "paused"
    STOPPED = "stopped"
    FAILED = "failed"


class Run(models.Model):
    circuit = models.ForeignKey("circuits.Circuit", on_delete=models.CASCADE, related_name="runs")
    version = models.ForeignKey("circuits.CircuitVersion", on_delete=models.PROTECT, related_name="runs")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="runs")
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.CREATED)
    current_tick = models.IntegerField(default=-1)
    last_sequence = models.IntegerField(default=0)  # sequence number of the last accepted push
    # The input log's sequence number up to which the input tables (InputRow) hold it.
    input_rows_through = models.IntegerField(default=0)
    worker = models.CharField(max_length=200, blank=True, default="")
    # The worker pool (Celery queue) that runs it: pools sharing one database each sweep
    # and take over only their own runs ("" = any pool, for runs from before pools).
    queue = models.CharField(max_length=200, blank=True, default="")
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "circuits_run"  # made by the circuits app, before runs had their own
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"run {self.pk} of {self.circuit.name} ({self.status})"

    @property
    def group_name(self) -> str:
        return f"run.{self.pk}"


class Push(models.Model):
    """The durable input log: one accepted push of changes to one input of a run.

    Written (and committed) before the push is acknowledged; `applied_tick` is set in
    the same transaction that stores the tick's outputs, so each push is applied once.
    """

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="pushes")
    sequence = models.PositiveIntegerField()
    input = models.CharField(max_length=64)
    # The validated change: Arrow IPC bytes (dbsp/arrow_change.py: the input's columns
    # and `__w`), which the worker steps without parsing again. Pushes logged before it
    # existed keep their JSON records (`records_json`, NULL in newer rows).
    change = models.BinaryField(null=True, blank=True)
    records_json = models.JSONField(null=True, blank=True, db_column="records")  # [{"data": {...}, "weight": w}]
    row_count = models.PositiveIntegerField()
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)
    received_at = models.DateTimeField(auto_now_add=True)
    applied_tick = models.IntegerField(null=True, blank=True)
    # who pushed it (shown when a row is explained); NULL for pushes from before it was recorded
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                             related_name="+")

    class Meta:
        db_table = "circuits_push"
        ordering = ["run", "sequence"]
        constraints = [
            models.UniqueConstraint(fields=["run", "sequence"], name="unique_push_sequence"),
            models.UniqueConstraint(
                fields=["run", "idempotency_key"],
                condition=Q(idempotency_key__isnull=False),
                name="unique_push_idempotency_key",
            ),
        ]
        indexes = [models.Index(fields=["run", "applied_tick"], name="push_run_applied")]

    @property
    def token(self) -> str:
        return f"{self.run_id}:{self.sequence}"

    def change_table(self, schema):
        """The change as an Arrow table (from either stored form); `schema` is the input's."""
        from dbsp import arrow_change

        if self.change is not None:
            return arrow_change.from_ipc(self.change)
        return arrow_change.from_records_json(self.records_json or [], schema)

    @property
    def records(self) -> list[dict]:
        """The change as JSON records [{"data": {...}, "weight": w}], whichever form it is stored in."""
        if self.change is None:
            return self.records_json
        from dbsp import arrow_change

        table = arrow_change.from_ipc(self.change)
        return arrow_change.records_json(table, arrow_change.input_schema(table.schema))

    @records.setter
    def records(self, value: list[dict]) -> None:
        self.records_json, self.change = value, None


class Encoded:
    """A JSON value with its text already made: stored as that text, not encoded again
    (the tick loop encodes a tick's deltas once, to check their size: workers/tick_output.py)."""

    __slots__ = ("value", "text")

    def __init__(self, value, text: str):
        self.value, self.text = value, text


class ReuseEncoded(json.JSONEncoder):
    def encode(self, o):
        return o.text if isinstance(o, Encoded) else super().encode(o)


class TickOutput(models.Model):
    """What one tick of a run produced: output deltas per view, frontier and stats."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="ticks")
    tick = models.IntegerField()
    deltas = models.JSONField(encoder=ReuseEncoded)  # view -> [{"data": {...}, "weight": w}]
    frontier = models.JSONField(default=dict)
    stats = models.JSONField(default=dict)
    ms = models.FloatField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "circuits_tickoutput"
        ordering = ["run", "tick"]
        constraints = [models.UniqueConstraint(fields=["run", "tick"], name="unique_run_tick")]


class InputRow(models.Model):
    """A run's input tables as accepted: one row of one input with its weight (the
    integral of every accepted push; pending ones included). Maintained when a push is
    accepted, in its transaction (runs/input_tables.py). `key` identifies the row within
    its input: a hash of the row, or of its primary key's values for a keyed input."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="input_rows")
    input = models.CharField(max_length=64)
    key = models.CharField(max_length=32)
    data = models.JSONField()
    weight = models.BigIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "input", "key"], name="unique_input_row")]


class VerificationStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class Verification(models.Model):
    """A request to recompute a run's views at a tick from scratch and compare them with
    the incremental outputs (runs/verify.py; carried out by workers/verify.py)."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="verifications")
    tick = models.IntegerField()
    status = models.CharField(max_length=16, choices=VerificationStatus.choices, default=VerificationStatus.QUEUED)
    progress = models.FloatField(default=0.0)  # 0..1
    method = models.CharField(max_length=16, blank=True, default="")  # "reference" or "spark"
    result = models.JSONField(null=True, blank=True)  # {"ok": bool, "views": {view: {"missing", "extra"}}}
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]


class ExplanationStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class Explanation(models.Model):
    """A row's explanation over a log too large to work out in the request
    (runs/explain.py), carried out on the verification queue (workers/explain.py)."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="explanations")
    params = models.JSONField()  # the request's query parameters (checked), tick resolved
    status = models.CharField(max_length=16, choices=ExplanationStatus.choices, default=ExplanationStatus.QUEUED)
    result = models.JSONField(null=True, blank=True)  # the explanation, as the request would have answered
    error = models.JSONField(null=True, blank=True)  # {"status", "detail", "errors"} of a failure
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]


class Inspection(models.Model):
    """Every node's delta and contents at one tick of a run, recomputed from the input
    log by the reference evaluator (runs/inspection.py asks for it; workers/inspection.py
    computes it on the verification queue) and stored as Arrow files
    (runs/inspection_store.py), from which the node inspector pages. One per (run, tick):
    a tick's inputs never change once applied, so it is computed once and kept until
    evicted (INSPECT_CACHE_MAX_BYTES) or its run is deleted."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="inspections")
    tick = models.IntegerField()
    status = models.CharField(max_length=16, choices=VerificationStatus.choices, default=VerificationStatus.QUEUED)
    progress = models.FloatField(default=0.0)  # 0..1
    method = models.CharField(max_length=16, blank=True, default="")  # "reference"
    bytes = models.BigIntegerField(default=0)  # size of its stored files
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    used_at = models.DateTimeField(auto_now_add=True)  # last page read (eviction: least recently used first)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "tick"], name="unique_inspection_tick")]
