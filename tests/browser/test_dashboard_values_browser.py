"""Issue 14, the run dashboard's values as a user reads and types them, in Debian's
Chromium at 1440x900 against the real stack (uvicorn + Celery worker + Spark):

- one timestamp format: the push form's placeholder, its error under the field, the CSV
  preview's error and the server's own refusal all say the same format;
- no silent truncation: a long value in an output table, in the change feed and in the
  CSV preview is whole in its tooltip (title) or shown whole (wrapped).

Screenshots: tests/artifacts/dashboard-values-*.png."""
import pytest
from playwright.sync_api import expect

from circuits import services
from tests.browser.user_steps import PASSWORD, log_in, pages, rest_client, shot, start_run, wait_status

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.django_db(transaction=True)]

#: The format the form's placeholder shows for a timestamp column.
TIMESTAMP_FORMAT = "YYYY-MM-DDTHH:MM:SS"

#: An input passed straight to an output: what is pushed is what the tables show.
EVENTS = {
    "format": "dbspweb.circuit", "version": 1,
    "nodes": [
        {"id": "events", "kind": "input", "position": {"x": 0, "y": 0},
         "params": {"schema": [{"name": "id", "type": "bigint", "nullable": False},
                               {"name": "note", "type": "string"},
                               {"name": "at", "type": "timestamp"}]}},
        {"id": "notes", "kind": "output", "position": {"x": 260, "y": 0}, "params": {}},
    ],
    "edges": [{"from": {"node": "events", "port": "out"}, "to": {"node": "notes", "port": "in"}}],
}

LONG_NOTE = ("A note far wider than any table cell: " + " ".join(f"word{i}" for i in range(60)) + " — the end.")


@pytest.fixture
def browser(live_stack):
    with pages(live_stack.base_url) as new_page:
        yield new_page


def whole_or_titled(locator, text):
    """The element shows all of `text` (nothing clipped), or its tooltip holds all of it."""
    clipped = locator.evaluate("el => el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1")
    title = locator.get_attribute("title") or ""
    if clipped:
        assert text in title, f"{text[:40]!r}… is cut off and its tooltip is {title!r}"
    else:
        assert text in locator.inner_text().replace("\n", " ") or text in title
    return clipped


def test_one_timestamp_format_and_long_values_are_never_cut_silently(live_stack, browser, make_user, tmp_path):
    user = make_user("reader", PASSWORD)
    circuit = services.create_circuit(user, "Events", "", "private", EVENTS)
    client = rest_client(live_stack.base_url, user)
    run_id = start_run(client, circuit.id)
    wait_status(client, run_id, "running")
    page = browser()
    log_in(page, "reader")
    page.goto(f"/#/runs/{run_id}")
    expect(page.get_by_test_id("run-status")).to_have_text("running")

    # The placeholder says the format; a timestamp written otherwise is refused under its
    # field in the same words, before anything is sent.
    at = page.get_by_test_id("push-field-events-at")
    assert at.get_attribute("placeholder") == TIMESTAMP_FORMAT
    page.get_by_test_id("push-field-events-id").fill("1")
    at.fill("24/11/2026 10:00")
    page.get_by_test_id("push-insert-events").click()
    error = page.get_by_test_id("push-field-error-events-at")
    expect(error).to_be_visible()
    assert TIMESTAMP_FORMAT in error.inner_text(), error.inner_text()
    # ... and reads as an error (the run page has the error style without the editor's).
    r, g, b = (int(v) for v in error.evaluate("el => getComputedStyle(el).color").strip("rgba()").split(",")[:3])
    assert r > 150 and g < 100 and b < 100, f"the field error is coloured rgb({r}, {g}, {b}), not as an error"
    at.scroll_into_view_if_needed()
    shot(page, "dashboard-values-timestamp-error")
    # The server, asked directly, names the same format.
    refused = client.post(f"/api/runs/{run_id}/inputs/events/push/", json=[{"insert": {"id": 9, "at": "24/11/2026 10:00"}}])
    assert refused.status_code == 400 and TIMESTAMP_FORMAT in refused.text, refused.text
    # ... and so does the CSV preview.
    page.get_by_test_id("push-tab-csv-events").click()
    bad_csv = tmp_path / "bad.csv"
    bad_csv.write_text("id,note,at\n2,x,24/11/2026 10:00\n")
    page.get_by_test_id("csv-file-events").set_input_files(str(bad_csv))
    expect(page.get_by_test_id("csv-row-errors").first).to_contain_text(TIMESTAMP_FORMAT)

    # A long value: the CSV preview's cell, the output table's cell and the change feed's
    # row each show it whole or carry it whole in the tooltip.
    long_csv = tmp_path / "long.csv"
    long_csv.write_text(f'id,note,at\n1,"{LONG_NOTE}",2026-11-24T10:00:00\n')
    page.get_by_test_id("csv-file-events").set_input_files(str(long_csv))
    expect(page.get_by_test_id("csv-summary-events")).to_contain_text("1 row, all valid")
    preview_cell = page.get_by_test_id("csv-preview-events").get_by_test_id("csv-row").first.locator("td").nth(3)
    whole_or_titled(preview_cell, LONG_NOTE)
    page.get_by_test_id("csv-upload-submit-events").click()
    expect(page.get_by_test_id("run-lag")).to_have_text("0 pushes")

    cell = page.get_by_test_id("view-table-notes").get_by_test_id("view-row").first.locator("td").nth(1)
    expect(cell).to_contain_text("A note far wider")
    assert whole_or_titled(cell, LONG_NOTE), "the table cell should be narrower than the note (else this checks nothing)"
    change = page.get_by_test_id("delta-feed-notes").get_by_test_id("delta-row").first
    expect(change).to_contain_text("A note far wider")
    whole_or_titled(change, LONG_NOTE)
    # The row's other values are shown too (the timestamp after the note).
    assert "2026-11-24" in change.inner_text() + (change.get_attribute("title") or "")
    page.get_by_test_id("view-table-notes").scroll_into_view_if_needed()
    cell.hover()
    shot(page, "dashboard-values-long-cell")
    client.close()
