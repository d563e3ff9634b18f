"""Every model change has its migration: a fresh database built from the migrations has
the tables the code expects (a missing migration passes the tests, which build the test
database from the models' migrations, only until someone deploys)."""
import io

import pytest
from django.core.management import call_command

pytestmark = [pytest.mark.one_backend, pytest.mark.django_db]


def test_the_models_need_no_new_migration():
    out = io.StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=out)
    except SystemExit as e:
        pytest.fail(f"a model changed without its migration (makemigrations exit {e.code}):\n{out.getvalue()}")
