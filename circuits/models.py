"""Circuits as versioned documents, runs of a version, the durable input log of every
pushed change, and the output deltas each tick produced."""
from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q


class Visibility(models.TextChoices):
    PRIVATE = "private"
    UNLISTED = "unlisted"
    PUBLIC = "public"


def new_share_token() -> str:
    """An unguessable capability for reading an unlisted circuit (256 bits)."""
    return secrets.token_urlsafe(32)


class Tag(models.Model):
    """A label on circuits; lower-case, shared by everyone, filterable (`?tag=`)."""

    name = models.SlugField(max_length=50, unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Circuit(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="circuits")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="")
    visibility = models.CharField(max_length=16, choices=Visibility.choices, default=Visibility.PRIVATE)
    tags = models.ManyToManyField(Tag, blank=True, related_name="circuits")
    # The capability in share links (`/api/shared/<token>/`, `X-Share-Token`, `?share=`):
    # it opens an unlisted circuit to whoever holds it; revoking rotates it.
    share_token = models.CharField(max_length=64, unique=True, default=new_share_token, editable=False)
    forked_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="forks")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]

    def __str__(self) -> str:
        return self.name

    @property
    def latest_version(self) -> "CircuitVersion | None":
        prefetched = getattr(self, "_prefetched_objects_cache", {}).get("versions")
        if prefetched is not None:
            return max(prefetched, key=lambda v: v.number, default=None)
        return self.versions.order_by("-number").first()

    @classmethod
    def visible_to(cls, user, share_token: str | None = None):
        """Circuits a user may read: their own, those granted to them, anyone's public
        one, and the unlisted one whose share token they hold. Private circuits of
        others are never visible (no token opens them)."""
        readable = Q(visibility=Visibility.PUBLIC)
        if share_token:
            readable |= Q(visibility=Visibility.UNLISTED, share_token=share_token)
        if user.is_authenticated:
            readable |= Q(owner=user) | Q(pk__in=CircuitGrant.objects.filter(user=user).values("circuit_id"))
        return cls.objects.filter(readable)


class CircuitGrant(models.Model):
    """The owner lets another user see the circuit (even a private one) and, with
    `can_operate`, start/stop its runs and push to them. Managed through the share settings."""

    circuit = models.ForeignKey(Circuit, on_delete=models.CASCADE, related_name="grants")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="circuit_grants")
    can_operate = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["circuit", "user__username"]
        constraints = [models.UniqueConstraint(fields=["circuit", "user"], name="unique_circuit_grant")]

    def __str__(self) -> str:
        return f"{self.user} on {self.circuit}" + (" (operate)" if self.can_operate else "")


class CircuitVersion(models.Model):
    """An immutable snapshot of a circuit's document."""

    circuit = models.ForeignKey(Circuit, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    document = models.JSONField()
    problems = models.JSONField(default=list)
    #: what the author said about this version when saving it ("" when nothing)
    message = models.CharField(max_length=500, blank=True, default="")
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
    # The worker pool (Celery queue) that runs it: pools sharing one database each sweep
    # and take over only their own runs ("" = any pool, for runs from before pools).
    queue = models.CharField(max_length=200, blank=True, default="")
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
