"""The test session's environment, set before pytest-django reads the settings (loaded
with `-p tests.session_env` from pytest.ini): development mode, as ./scripts/run asks
for it, since the settings default DJANGO_DEBUG to off (which needs DJANGO_SECRET_KEY).
The processes the tests start (live servers, workers) inherit it. Tests of the default
itself run the settings in a subprocess without it (tests/test_settings.py,
tests/test_server_errors.py)."""
import os

os.environ.setdefault("DJANGO_DEBUG", "1")
