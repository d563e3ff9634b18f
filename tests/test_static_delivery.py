"""The built frontend as a browser gets it: hashed assets compressed (brotli, gzip) and
cached for a year, index.html revalidated on every load (issue 14, delivery)."""
import re

import pytest
from django.conf import settings

pytestmark = pytest.mark.django_db

DIST = settings.FRONTEND_DIST


def built_assets():
    if not (DIST / "index.html").exists():
        pytest.fail("frontend/dist is not built: run `npm run build` in frontend/")
    index = (DIST / "index.html").read_text()
    return re.findall(r'/static/app/assets/[^"]+\.(?:js|css)', index)


def body(response):
    return b"".join(response.streaming_content) if response.streaming else response.content


def test_hashed_assets_are_compressed_and_cached_for_a_year(client):
    assets = built_assets()
    script = next(a for a in assets if a.endswith(".js"))
    plain = client.get(script)
    assert plain.status_code == 200
    assert "Content-Encoding" not in plain.headers
    assert plain.headers["Cache-Control"] == "max-age=315360000, public, immutable"
    assert plain.headers["Vary"] == "Accept-Encoding"

    br = client.get(script, HTTP_ACCEPT_ENCODING="gzip, deflate, br")
    assert br.headers["Content-Encoding"] == "br"
    assert int(br.headers["Content-Length"]) < int(plain.headers["Content-Length"]) / 2
    gz = client.get(script, HTTP_ACCEPT_ENCODING="gzip")
    assert gz.headers["Content-Encoding"] == "gzip"
    # What arrives decompresses to the very file (Python's gzip; brotli is checked by size).
    import gzip

    assert gzip.decompress(body(gz)) == body(plain)


def test_index_is_revalidated_and_names_only_hashed_assets(client):
    response = client.get("/")
    assert response.status_code == 200
    assert "no-cache" in response.headers["Cache-Control"]
    for asset in built_assets():
        assert re.search(settings.WHITENOISE_IMMUTABLE_FILE_TEST, asset), asset
