"""Request throttles: a request over its rate is answered 429 with `Retry-After` (seconds)
and the error body naming the limit. Rates are `settings.THROTTLE_RATES[scope]`, read on
each request (env DBSPWEB_THROTTLE_<SCOPE>, e.g. "20/min"; empty or "off" disables a
scope), counted per client address (REMOTE_ADDR, or the address DBSPWEB_NUM_PROXIES
proxies in from the right of X-Forwarded-For) in Django's cache: per web process with
the default local-memory cache.

| scope | counts | applied to |
|---|---|---|
| anon | every anonymous request | every API view (default) |
| share | every request carrying a share token (header, `?share=`, share link) | every API view (default) |
| login | every attempt | POST /api/auth/login/, /api/auth/token/ |
| register | every attempt | POST /api/auth/register/ |
| validate | anonymous requests | POST /api/validate/, /api/plan/ |
"""
from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle

from ..access import share_token_of


class ConfiguredThrottle(SimpleRateThrottle):
    """A throttle whose rate is settings.THROTTLE_RATES[scope], read per request."""

    cache_format = "throttle_%(scope)s_%(ident)s"

    def __init__(self):  # the rate is read in allow_request, not once at start-up
        self.rate = None

    def get_rate(self):
        rate = (getattr(settings, "THROTTLE_RATES", {}) or {}).get(self.scope)
        return rate if rate and rate.strip().lower() not in {"off", "none", "0"} else None

    def allow_request(self, request, view):
        self.rate = self.get_rate()
        if self.rate is None:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        if super().allow_request(request, view):
            return True
        request.throttled_by = (self.scope, self.rate)  # named in the 429 (errors.py)
        return False

    def applies(self, request, view) -> bool:
        return True

    def get_cache_key(self, request, view):
        if not self.applies(request, view):
            return None
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class AnonThrottle(ConfiguredThrottle):
    scope = "anon"

    def applies(self, request, view):
        return not request.user.is_authenticated


class ShareTokenThrottle(ConfiguredThrottle):
    """Guessing share tokens: every request that carries one counts, whoever sends it."""

    scope = "share"

    def applies(self, request, view):
        return "token" in getattr(view, "kwargs", {}) and request.resolver_match.url_name == "shared-circuit" \
            or share_token_of(request) is not None


class LoginThrottle(ConfiguredThrottle):
    scope = "login"


class RegisterThrottle(ConfiguredThrottle):
    scope = "register"


class AnonValidateThrottle(ConfiguredThrottle):
    scope = "validate"

    def applies(self, request, view):
        return not request.user.is_authenticated
