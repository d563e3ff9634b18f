"""CSV pushes: `Content-Type: text/csv` bodies and multipart uploads of a .csv file,
turned into change records for `input_log.push` (which logs them exactly as JSON pushes)."""
from django.conf import settings
from rest_framework.parsers import BaseParser

from circuits.api.parsers import content_length
from circuits.services import ServiceError

from ..csv_records import CSVInvalid, decode, records_from_csv
from ..interface import input_schema


def check_body_size(size: int | None) -> None:
    """Refuse a push body over DBSPWEB_MAX_BODY_BYTES before reading it (413). JSON
    bodies are checked by their parser (circuits/api/parsers.py); a CSV body is read
    from the raw stream here."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if limit is not None and size is not None and size > limit:
        raise ServiceError(
            f"The request body has {size} bytes; the limit is {limit} (DBSPWEB_MAX_BODY_BYTES). Split the push.", 413,
            [{"field": "body", "message": f"{size} bytes; the limit is {limit}"}],
        )


class CSVText(str):
    """A CSV request body (kept apart from JSON strings)."""


class CSVParser(BaseParser):
    media_type = "text/csv"

    def parse(self, stream, media_type=None, parser_context=None):
        check_body_size(content_length((parser_context or {}).get("request")))
        return CSVText(stream.read().decode("latin-1"))  # bytes kept 1:1; decoded as UTF-8 below


def _csv_text(request) -> str | None:
    data = request.data
    if isinstance(data, CSVText):
        return decode(data.encode("latin-1"))
    if request.content_type.startswith("text/csv"):
        return ""  # an empty body: no parser ran
    if request.content_type.startswith("multipart/form-data"):
        files = list(request.FILES.values())
        if len(files) != 1:
            raise CSVInvalid("Upload exactly one .csv file (form field 'file').",
                             [{"field": "file", "message": f"{len(files)} files uploaded"}])
        check_body_size(files[0].size)
        return decode(files[0].read())
    return None


def push_records(request, run, input_name: str):
    """The change records of a push request: the JSON body as is, or the CSV converted."""
    try:
        text = _csv_text(request)
    except CSVInvalid as e:
        raise ServiceError(e.detail, e.status, e.problems) from None
    if text is None:
        return request.data
    schema = input_schema(run, input_name)
    try:
        return records_from_csv(text, schema)
    except CSVInvalid as e:
        raise ServiceError(e.detail, e.status, e.problems) from None
