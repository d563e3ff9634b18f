"""What a server error shows. With DJANGO_DEBUG=0 a 500 is the API's JSON error body,
no traceback and no settings (`handler500`). With debug on, Django's technical page also
hides the settings that hold addresses and credentials (REDIS_URL, DATABASE_URL, the
broker and channel layer), not only those named like keys and passwords."""
import re

from django.http import JsonResponse
from django.views.debug import SafeExceptionReporterFilter


def server_error(request, *args, **kwargs):
    return JsonResponse({"detail": "Server error (500). It has been logged; please try again or report it.",
                         "errors": []}, status=500)


class SettingsHidingFilter(SafeExceptionReporterFilter):
    hidden_settings = re.compile(
        "API|TOKEN|KEY|SECRET|PASS|SIGNATURE|HTTP_COOKIE|URL|REDIS|BROKER|DATABASE|CHANNEL_LAYERS|CACHES|HOSTS|SPARK",
        flags=re.I,
    )
