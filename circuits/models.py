"""Circuits as versioned documents, runs of a version, the durable input log of every
pushed change, and the output deltas each tick produced."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class Visibility(models.TextChoices):
    PRIVATE = "private"
    UNLISTED = "unlisted"
    PUBLIC = "public"


class Circuit(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="circuits")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="")
    visibility = models.CharField(max_length=16, choices=Visibility.choices, default=Visibility.PRIVATE)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]

    def __str__(self) -> str:
        return self.name

    @property
    def latest_version(self) -> "CircuitVersion | None":
        return self.versions.order_by("-number").first()

    @classmethod
    def visible_to(cls, user):
        """Circuits a user may read: their own, and anyone's public or unlisted one."""
        shared = Q(visibility__in=[Visibility.PUBLIC, Visibility.UNLISTED])
        if user.is_authenticated:
            return cls.objects.filter(shared | Q(owner=user))
        return cls.objects.filter(shared)


class CircuitVersion(models.Model):
    """An immutable snapshot of a circuit's document."""

    circuit = models.ForeignKey(Circuit, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    document = models.JSONField()
    problems = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["circuit", "number"]
        constraints = [models.UniqueConstraint(fields=["circuit", "number"], name="unique_version_number")]

    def __str__(self) -> str:
        return f"{self.circuit.name} v{self.number}"


class RunStatus(models.TextChoices):
    CREATED = "created"
    RUNNING = "running"
    PAUSED = "paused"
    STOPPED = "stopped"
    FAILED = "failed"


class Run(models.Model):
    circuit = models.ForeignKey(Circuit, on_delete=models.CASCADE, related_name="runs")
    version = models.ForeignKey(CircuitVersion, on_delete=models.PROTECT, related_name="runs")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="runs")
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.CREATED)
    current_tick = models.IntegerField(default=-1)
    last_sequence = models.IntegerField(default=0)  # sequence number of the last accepted push
    worker = models.CharField(max_length=200, blank=True, default="")
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
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
    records = models.JSONField()  # [{"data": {...}, "weight": w}], already validated
    row_count = models.PositiveIntegerField()
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)
    received_at = models.DateTimeField(auto_now_add=True)
    applied_tick = models.IntegerField(null=True, blank=True)

    class Meta:
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


class TickOutput(models.Model):
    """What one tick of a run produced: output deltas per view, frontier and stats."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="ticks")
    tick = models.IntegerField()
    deltas = models.JSONField()  # view -> [{"data": {...}, "weight": w}]
    frontier = models.JSONField(default=dict)
    stats = models.JSONField(default=dict)
    ms = models.FloatField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "tick"]
        constraints = [models.UniqueConstraint(fields=["run", "tick"], name="unique_run_tick")]
