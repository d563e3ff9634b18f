"""Runs follow their circuit: a run is visible exactly when its circuit is, and operated
by whoever may operate the circuit (circuits/access.py)."""
from __future__ import annotations

from django.http import Http404

from circuits.access import readable_circuits

from .models import Run


def readable_run(request, pk) -> Run:
    """A run the user may see (its circuit's visibility rules), else 404."""
    run = Run.objects.select_related("circuit", "version").filter(pk=pk).first()
    if run is None or not readable_circuits(request).filter(pk=run.circuit_id).exists():
        raise Http404
    return run
