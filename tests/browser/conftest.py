import pytest

from tests.browser import chromium


@pytest.fixture(scope="package", autouse=True)
def _one_chromium():
    """One Chromium for every browser test (tests/browser/chromium.py `shared_browser`),
    closed after the last: the browser tests run one after another (tests/conftest.py
    orders them), so this package is left once."""
    yield
    chromium.close_shared_browser()


@pytest.fixture(autouse=True)
def _fresh_contexts():
    """Each test starts with no context of an earlier test left in the shared Chromium
    (one that failed before closing its own): its cookies, storage and pages are gone."""
    chromium.close_contexts()
    yield
    chromium.close_contexts()
