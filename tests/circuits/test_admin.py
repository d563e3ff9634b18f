"""Admin pages for circuits (versions and grants inline), runs (input log inline), the input log."""
import pytest
from django.test import Client

from circuits.models import CircuitGrant, Comment, CommentThread
from runs.models import Push, Run

pytestmark = pytest.mark.django_db


def test_admin_pages_render(make_user, circuit_of, django_user_model):
    owner = make_user("alice")
    circuit = circuit_of(owner, "public")
    CircuitGrant.objects.create(circuit=circuit, user=make_user("bob"), can_operate=True)
    run = Run.objects.create(circuit=circuit, version=circuit.latest_version, created_by=owner, status="running")
    push = Push.objects.create(run=run, sequence=1, input="orders", records=[{"data": {"id": 1}, "weight": 1}], row_count=1, idempotency_key="k-9")
    admin = django_user_model.objects.create_superuser("root", "root@example.org", "pw")
    browser = Client()
    browser.force_login(admin)
    page = browser.get(f"/admin/circuits/circuit/{circuit.pk}/change/")
    assert page.status_code == 200
    assert b"Circuit versions" in page.content and b"bob" in page.content and circuit.share_token.encode() in page.content
    run_page = browser.get(f"/admin/runs/run/{run.pk}/change/")
    assert run_page.status_code == 200 and b"k-9" in run_page.content
    log = browser.get("/admin/runs/push/?q=k-9")
    assert log.status_code == 200 and b"k-9" in log.content
    assert browser.get(f"/admin/runs/push/{push.pk}/change/").status_code == 200
    assert browser.get("/admin/runs/push/add/").status_code == 403  # the log is append-only
    thread = CommentThread.objects.create(circuit=circuit, node="big", created_by=owner)
    Comment.objects.create(thread=thread, author=owner, body="why 100?")
    thread_page = browser.get(f"/admin/circuits/commentthread/{thread.pk}/change/")
    assert thread_page.status_code == 200 and b"why 100?" in thread_page.content
    for listing in ("circuits/circuit", "runs/run", "circuits/tag", "runs/tickoutput", "circuits/commentthread"):
        assert browser.get(f"/admin/{listing}/").status_code == 200
    # Links from before runs had their own app lead to the same pages.
    old = browser.get(f"/admin/circuits/run/{run.pk}/change/", follow=True)
    assert old.redirect_chain[0] == (f"/admin/runs/run/{run.pk}/change/", 301) and b"k-9" in old.content
    assert browser.get("/admin/circuits/push/?q=k-9", follow=True).redirect_chain[0][0] == "/admin/runs/push/?q=k-9"
