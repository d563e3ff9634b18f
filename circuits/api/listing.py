"""The circuits list: which circuits a request sees, searched and filtered.

`scope`: `mine` (owned), `shared` (granted to the requester by others), `public`
(everyone's public circuits); without it: mine + shared + public. Unlisted circuits of
others are never listed (a share token opens them by id, it does not list them).
Filters: `search` (name or description, case-insensitive), `tag` (repeatable: every tag
must be present), `owner` (username), `visibility`.
"""
from django.db.models import Q
from rest_framework.pagination import PageNumberPagination

from ..models import Circuit, CircuitGrant, Visibility
from ..services import NUL, NUL_MESSAGE, ServiceError

SCOPES = ("mine", "shared", "public")


class CircuitPagination(PageNumberPagination):
    """`?page=` (1-based) and `?page_size=` (default 50, at most 200); {count, next, previous, results}."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


def listed_circuits(request):
    user, params = request.user, request.query_params
    granted = Q(pk__in=CircuitGrant.objects.filter(user=user).values("circuit_id")) if user.is_authenticated else Q(pk__in=[])
    mine = Q(owner=user) if user.is_authenticated else Q(pk__in=[])
    public = Q(visibility=Visibility.PUBLIC)
    scope = params.get("scope") or ""
    if scope == "mine":
        where = mine
    elif scope == "shared":
        where = granted & ~mine
    elif scope == "public":
        where = public
    elif scope == "":
        where = mine | granted | public
    else:
        raise ServiceError(f"Unknown scope {scope!r} (one of: {', '.join(SCOPES)}).", 400,
                           [{"field": "scope", "message": f"expected one of {', '.join(SCOPES)}"}])
    for name in ("search", "tag", "owner"):  # PostgreSQL cannot compare text with a NUL character
        if any(NUL in value for value in params.getlist(name)):
            raise ServiceError(f"Query parameter {name!r} contains a NUL character.", 400,
                               [{"field": name, "message": NUL_MESSAGE}])
    qs = Circuit.objects.filter(where)
    if q := (params.get("search") or "").strip():
        qs = qs.filter(Q(name__icontains=q) | Q(description__icontains=q))
    for tag in params.getlist("tag"):
        if tag.strip():
            qs = qs.filter(tags__name=tag.strip().lower())
    if owner := params.get("owner"):
        qs = qs.filter(owner__username=owner)
    if visibility := params.get("visibility"):
        if visibility not in Visibility.values:
            raise ServiceError(f"Unknown visibility {visibility!r}.", 400,
                               [{"field": "visibility", "message": f"expected one of {', '.join(Visibility.values)}"}])
        qs = qs.filter(visibility=visibility)
    return qs.distinct()
