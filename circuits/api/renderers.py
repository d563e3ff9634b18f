"""The API's JSON renderer."""
from rest_framework.renderers import JSONRenderer
from rest_framework.utils import json


class SafeJSONRenderer(JSONRenderer):
    """JSON answers; a string that cannot be encoded as UTF-8 (a lone surrogate stored
    before the door refused them) is sent \\u-escaped instead of failing the answer."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:
            text = json.dumps(data, cls=self.encoder_class, ensure_ascii=True, allow_nan=not self.strict,
                              separators=(",", ":"))
            return text.encode("ascii")
