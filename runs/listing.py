"""The runs a user lists as theirs, across circuits ("My runs", `GET /api/runs/`).

Theirs: every run of a circuit they own, and the runs they started themselves on a
circuit still shared with them (a grant, or a public circuit). Only runs the user may
read (runs/access.py: a run is visible exactly when its circuit is); others' runs of a
public circuit are not theirs and are not listed. Newest first, optionally filtered by
status; each run comes with its circuit and version in the same query, and whether the
user may operate it (stop it) without a query per run.
"""
from __future__ import annotations

from django.db.models import BooleanField, Exists, ExpressionWrapper, OuterRef, Q, QuerySet

from circuits.models import Circuit, CircuitGrant
from circuits.services import ServiceError

from .models import Run, RunStatus

#: The short form of a run's error in a listing: its first line, at most this long.
ERROR_PREVIEW = 160


def statuses_of(values: list[str]) -> list[str]:
    """`?status=` values (repeatable, or comma-separated) checked against the run statuses."""
    wanted = [s.strip() for value in values for s in value.split(",") if s.strip()]
    unknown = [s for s in wanted if s not in RunStatus.values]
    if unknown:
        raise ServiceError(f"Unknown run status {unknown[0]!r} (one of: {', '.join(RunStatus.values)}).", 400,
                           [{"field": "status", "message": f"expected one of {', '.join(RunStatus.values)}"}])
    return wanted


def runs_of(user, statuses: list[str] | None = None) -> QuerySet[Run]:
    """The user's runs (see the module's docstring), newest first, with `circuit`,
    `version` and the annotation `operable` loaded."""
    if not user.is_authenticated:
        return Run.objects.none()
    readable = Circuit.visible_to(user).values("pk")
    operate_grant = CircuitGrant.objects.filter(circuit=OuterRef("circuit_id"), user=user, can_operate=True)
    runs = (Run.objects.filter(circuit__in=readable)
            .filter(Q(circuit__owner=user) | Q(created_by=user))
            .select_related("circuit", "version")
            .annotate(operable=ExpressionWrapper(Q(circuit__owner=user) | Exists(operate_grant), output_field=BooleanField()))
            .order_by("-created_at", "-id"))
    if statuses:
        runs = runs.filter(status__in=statuses)
    return runs


def error_preview(error: str) -> str:
    """A run's error in one short line, "…" where some was left out (the whole of it is
    in `GET /api/runs/<id>/`)."""
    lines = error.strip().splitlines()
    if not lines:
        return ""
    first = lines[0].strip()
    if len(first) > ERROR_PREVIEW:
        return first[: ERROR_PREVIEW - 1].rstrip() + "…"
    return first + (" …" if len(lines) > 1 else "")
