"""Who may do what with a circuit and its runs.

- read: the owner; users the owner granted access to; anyone for a public circuit;
  anyone holding the share token of an unlisted circuit (header `X-Share-Token` or
  `?share=`). Private circuits are readable by their owner and grantees only: no token
  opens them, and to everyone else they do not exist (404, not 403).
- operate (start/stop runs, push to them): the owner and users granted `can_operate`.
- edit (save new versions, write to the shared document, docs/collaboration.md): the owner
  and users granted `can_edit`.
- own (rename, delete, share settings and grants): the owner only.

Runs follow their circuit: a run is visible exactly when its circuit is (runs/access.py).
"""
from __future__ import annotations

from django.http import Http404
from rest_framework.exceptions import PermissionDenied

from .models import Circuit, CircuitGrant

SHARE_HEADER = "X-Share-Token"
SHARE_PARAM = "share"


def share_token_of(request) -> str | None:
    """The share token a request carries (header first, then `?share=`), if any."""
    token = request.headers.get(SHARE_HEADER) or request.GET.get(SHARE_PARAM)
    return token.strip() or None if token else None


def readable_circuits(request):
    return Circuit.visible_to(request.user, share_token_of(request))


def readable_circuit(request, pk) -> Circuit:
    circuit = readable_circuits(request).filter(pk=pk).select_related("owner").first()
    if circuit is None:
        raise Http404
    return circuit


def is_owner(user, circuit: Circuit) -> bool:
    return user.is_authenticated and circuit.owner_id == user.pk


def can_operate(user, circuit: Circuit) -> bool:
    if is_owner(user, circuit):
        return True
    return user.is_authenticated and CircuitGrant.objects.filter(circuit=circuit, user=user, can_operate=True).exists()


def can_edit(user, circuit: Circuit) -> bool:
    if is_owner(user, circuit):
        return True
    return user.is_authenticated and CircuitGrant.objects.filter(circuit=circuit, user=user, can_edit=True).exists()


def require_owner(request, circuit: Circuit) -> None:
    if not is_owner(request.user, circuit):
        raise PermissionDenied("Only the circuit's owner may do this.")


def require_operator(request, circuit: Circuit) -> None:
    if not can_operate(request.user, circuit):
        raise PermissionDenied("Only the circuit's owner, or a user the owner granted 'can_operate', may do this.")


def require_editor(request, circuit: Circuit) -> None:
    if not can_edit(request.user, circuit):
        raise PermissionDenied("Only the circuit's owner, or a user the owner granted 'can_edit', may do this.")
