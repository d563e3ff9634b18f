"""The door for JSON request bodies: every API view parses JSON with `GuardedJSONParser`
(settings.REST_FRAMEWORK's DEFAULT_PARSER_CLASSES), which refuses, before anything
recursive looks at the body:

- a body over the view's byte limit (`max_body_bytes` on the view, else
  DBSPWEB_MAX_BODY_BYTES): 413, nothing read beyond the limit;
- objects and arrays nested deeper than DBSPWEB_MAX_JSON_DEPTH: 400, found by a scan of
  the raw bytes (strings skipped) before the JSON decoder recurses;
- a lone surrogate (`"\\ud800"`: a JSON escape that is not half of a pair) in any string
  or key: 400 naming its path (`document.nodes.0.label`); no database, JSON column or
  UTF-8 encoder downstream can take one.
"""
from __future__ import annotations

import re

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser
from rest_framework.utils import json

from ..services import ServiceError

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_BRACKET = re.compile(rb"[\[\]{}]")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


#: bodies up to this size have their brackets counted whole-array (numpy: ~13 bytes of
#: arrays per byte); larger ones one bracket at a time
VECTOR_SCAN_MAX_BYTES = 8 * 1024 * 1024


def json_depth_over(body: bytes, limit: int) -> bool:
    """Whether the JSON text nests objects/arrays deeper than `limit` (strings ignored)."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    if len(body) <= VECTOR_SCAN_MAX_BYTES:
        return _depth_over_vectorised(body, limit)
    depth = 0
    for match in _BRACKET.finditer(_STRING.sub(b'""', body)):
        if match.group() in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def _depth_over_vectorised(body: bytes, limit: int) -> bool:
    """json_depth_over with the brackets counted whole-array (numpy) once the strings
    are cut out (the per-bracket Python loop was most of a large push's parse)."""
    import numpy as np

    a = np.frombuffer(_STRING.sub(b"", body), np.uint8)
    step = ((a == 91) | (a == 123)).astype(np.int32) - ((a == 93) | (a == 125))
    return bool(len(a) and np.cumsum(step, dtype=np.int64).max() > limit)


def lone_surrogate_paths(value, limit: int = 20) -> list[str]:
    """Dotted paths of the strings (or keys) in a parsed JSON value holding a lone
    surrogate; an iterative walk (the value's depth is already bounded), at most `limit`."""
    found, stack = [], [(value, "")]
    while stack and len(found) < limit:
        item, path = stack.pop()
        if isinstance(item, str):
            if _LONE_SURROGATE.search(item):
                found.append(path or "body")
        elif isinstance(item, dict):
            for key, sub in item.items():
                shown = _LONE_SURROGATE.sub("\N{REPLACEMENT CHARACTER}", key)
                sub_path = f"{path}.{shown}" if path else shown
                if _LONE_SURROGATE.search(key):
                    found.append(sub_path)
                else:
                    stack.append((sub, sub_path))
        elif isinstance(item, list):
            stack.extend((sub, f"{path}.{i}" if path else str(i)) for i, sub in reversed(list(enumerate(item))))
    return found


def body_too_big(size: int, limit: int, setting: str) -> ServiceError:
    return ServiceError(f"The request body has more than {limit} bytes (limit {setting} = {limit}).", 413,
                        [{"field": "body", "message": f"more than {limit} bytes (limit {setting})"}])


class GuardedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        context = parser_context or {}
        view, request = context.get("view"), context.get("request")
        limit = getattr(view, "max_body_bytes", None)
        setting = getattr(view, "max_body_setting", "DBSPWEB_MAX_BODY_BYTES")
        if limit is None:
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        declared = content_length(request)
        if limit is not None and declared is not None and declared > limit:
            raise body_too_big(declared, limit, setting)
        body = stream.read(limit + 1) if limit is not None else stream.read()
        if limit is not None and len(body) > limit:
            raise body_too_big(len(body), limit, setting)
        depth = settings.MAX_JSON_DEPTH
        if json_depth_over(body, depth):
            raise ServiceError(
                f"The JSON body nests objects and arrays more than {depth} deep (limit DBSPWEB_MAX_JSON_DEPTH = {depth}).",
                400, [{"field": "body", "message": f"nested more than {depth} deep (limit DBSPWEB_MAX_JSON_DEPTH)"}])
        try:
            text = body.decode(self.charset if hasattr(self, "charset") and self.charset else "utf-8")
            data = json.loads(text, parse_constant=json.strict_constant if self.strict else None)
        except RecursionError:  # the scan above makes this unreachable; kept as a net
            raise ParseError("JSON parse error - nested too deeply") from None
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        if _SURROGATE_ESCAPE.search(body) and (paths := lone_surrogate_paths(data)):
            raise ServiceError(
                f"The request contains a lone surrogate (a \\ud800-\\udfff escape that is not half of a pair) in {paths[0]}; "
                "it is not a character and cannot be stored.", 400,
                [{"field": path, "message": "contains a lone surrogate (\\ud800-\\udfff)"} for path in paths])
        return data


def content_length(request) -> int | None:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0) if request is not None else None
    except (ValueError, AttributeError):
        return None



class PushJSONParser(GuardedJSONParser):
    """A push's JSON body: `NaN`, `Infinity` and `-Infinity` (not JSON, but what many
    encoders write for such doubles) are read as the numbers they name, so the push's
    value check refuses them naming the row and column, as it refuses `1e400` and as a
    CSV's `NaN` is refused (runs/input_log.py), instead of a parse error naming nothing."""

    strict = False
