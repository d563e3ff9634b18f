"""CSV pushes: `Content-Type: text/csv` bodies and multipart uploads of a .csv file,
turned into change records and checked by the check every push shares
(`input_log.validate`, the same as a JSON push's), with each problem's CSV line; the
checked push goes to `input_log.push` as it is (not checked twice)."""
from django.conf import settings
from rest_framework.parsers import BaseParser

from circuits.api.parsers import content_length
from circuits.services import ServiceError
from dbsp.csv_records import CSVInvalid, decode, records_from_csv

from .. import input_log
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
    """The change records of a push request: the JSON body as is, or the CSV converted
    and checked (an `input_log.Validated`; 400 naming every bad row, line and field)."""
    try:
        text = _csv_text(request)
    except CSVInvalid as e:
        raise ServiceError(e.detail, e.status, e.problems) from None
    if text is None:
        return request.data
    schema = input_schema(run, input_name)
    try:
        parsed = records_from_csv(text, schema, settings.PUSH_MAX_ROWS)
    except CSVInvalid as e:
        raise ServiceError(e.detail, e.status, e.problems) from None
    checked, pending = [], None
    try:
        pending = input_log.validate(run, input_name, parsed.records)
    except ServiceError as e:
        if e.status != 400 or not e.errors or any("row" not in p for p in e.errors):
            raise
        checked = e.errors
    problems = parsed.merged(checked)
    if problems:
        raise ServiceError(f"The push was rejected: {len(problems)} problem(s) in its rows; nothing was stored.", 400,
                           problems)
    return pending
