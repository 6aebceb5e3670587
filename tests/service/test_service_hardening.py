"""Findings of probing a running server from outside (issue 12 §5), each pinned by a test.

Control characters (a 500 on PostgreSQL before), image formats and decoded-pixel cost, slow
clients (header and body deadlines), weak admin keys, keys in query strings, who may read
/metrics and /openapi.json, and a /docs page that renders with no CDN. Real uvicorn, SQLite and
PostgreSQL, a real headless Chromium.
"""

from __future__ import annotations

import io
import logging
import secrets
import shutil
import socket
import subprocess
import time

import httpx
import numpy as np
import pytest
from PIL import Image
from service_testkit import ADMIN_KEY, b64, images, png

from service.api.middleware import RedactQuery
from service.api.protocol import HeaderDeadlineProtocol
from service.core.settings import Settings
from service.main import create_app

PROBLEM = "application/problem+json"
NUL_BODIES = [
    ("/v1/personalize", {"description": "classify horses\u0000 and birds"}),
    ("/v1/personalize", {"classes": ["cat", "do\u0000g"]}),
    ("/v1/personalize", {"classes": ["cat", "dog"], "domain": "ske\u0007tch"}),
    ("/v1/personalize", {"client_id": "c\u0000"}),
]


@pytest.fixture(params=["sqlite", "postgresql"])
def any_db(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/h.db"
    return request.getfixturevalue("postgres_server").create_database(
        f"h_{secrets.token_hex(6)}")  # fmt: skip


def test_control_characters_are_422_on_every_database(run_live, make_settings, any_db):
    with run_live(make_settings(any_db)) as live:
        for path, body in NUL_BODIES:
            resp = live.http.post(path, json=body)
            assert resp.status_code == 422, (body, resp.status_code, resp.text)
            assert resp.headers["content-type"].startswith(PROBLEM)
        for body in ({"name": "n\u0000me"}, {"name": "x", "client_id": "c\u0000d"}):
            resp = live.admin.post("/v1/keys", json=body)
            assert resp.status_code == 422, (body, resp.text)
        multiline = live.http.post("/v1/personalize", json={"classes": ["cat", "dog"]})
        assert multiline.status_code == 200, multiline.text
        kept = live.http.post("/v1/personalize", json={"description": "cat\tdog\r\nand horse"})
        assert kept.status_code != 500 and "pattern" not in kept.text, kept.text


def _encode(array: np.ndarray, fmt: str, **kw) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(array).save(buf, format=fmt, **kw)
    return buf.getvalue()


def test_only_tested_image_formats_are_decoded(live):
    model = live.http.post("/v1/personalize", json={"classes": ["cat", "dog"]}).json()
    url = f"/v1/models/{model['id']}/predict"
    img = images(1, seed=3)[0]
    for fmt in ("PNG", "JPEG", "WEBP", "GIF", "BMP", "TIFF"):
        resp = live.http.post(url, json={"images": [b64(_encode(img, fmt))]})
        assert resp.status_code == 200, (fmt, resp.text)
    for fmt in ("PPM", "TGA", "PCX", "ICO"):  # Pillow decodes these, we do not offer them
        resp = live.http.post(url, json={"images": [b64(_encode(img, fmt))]})
        assert resp.status_code == 400, (fmt, resp.status_code)
        assert "supported format" in resp.json()["detail"], resp.text


def test_decoded_pixels_are_bounded_per_request_and_jpegs_decode_reduced(run_live, make_settings,
                                                                         tmp_path):  # fmt: skip
    settings = make_settings(f"sqlite:///{tmp_path}/px.db", max_image_pixels=2048 * 2048,
                             max_request_pixels=1_000_000, max_body_bytes=16 << 20,
                             max_image_bytes=8 << 20)  # fmt: skip
    ramp = np.linspace(0, 255, 2048, dtype=np.uint8)  # smooth: small as PNG and as JPEG
    big = np.stack(np.broadcast_arrays(ramp[None, :], ramp[:, None], ramp[::-1, None]), axis=-1)
    with run_live(settings) as live:
        model = live.http.post("/v1/personalize", json={"classes": ["cat", "dog"]}).json()
        url = f"/v1/models/{model['id']}/predict"
        small = [b64(png(a)) for a in images(3, seed=1, size=512)]  # 3 × 262k = 786k pixels
        assert live.http.post(url, json={"images": small}).status_code == 200
        over = live.http.post(url, json={"images": small + small[:1]})  # 1.05 M pixels
        assert over.status_code == 413 and over.json()["type"].endswith("too-many-pixels")
        jpeg = live.http.post(url, json={"images": [b64(_encode(big, "JPEG", quality=80))]})
        assert jpeg.status_code == 200, jpeg.text  # decoded at 1/8 scale: 256² pixels
        same_png = live.http.post(url, files=[("files", ("big.png", png(big)))])
        assert same_png.status_code == 413, same_png.text  # 4.2 M decoded pixels


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.settimeout(10)
    return sock


def _closed_within(sock: socket.socket, seconds: float) -> tuple[bool, bytes]:
    """Trickle nothing more; True when the server closes the connection in time."""
    t0, got = time.monotonic(), b""
    while time.monotonic() - t0 < seconds:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            return False, got
        if not chunk:
            return True, got
        got += chunk
    return False, got


def test_slow_headers_and_slow_bodies_are_cut_off(make_settings, serve_app, tmp_path):
    app = create_app(make_settings(f"sqlite:///{tmp_path}/slow.db", body_timeout_s=1.0))
    with serve_app(app, http=HeaderDeadlineProtocol, header_timeout_s=1.0) as server:
        slow = _connect(server.port)
        slow.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # headers never finish
        closed, _ = _closed_within(slow, 5)
        assert closed, "a connection with incomplete headers stayed open"
        body = _connect(server.port)
        body.sendall(b"POST /v1/personalize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                     b"\r\nAuthorization: Bearer " + ADMIN_KEY.encode() +
                     b"\r\nContent-Length: 1000\r\n\r\n{\"classes\": ")  # fmt: skip
        closed, answer = _closed_within(body, 5)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        fine = httpx.get(f"{server.url}/healthz", timeout=5)  # keep-alive clients still served
        assert fine.status_code == 200
        for s in (slow, body):
            s.close()


@pytest.mark.parametrize("weak", [" " * 24, "a" * 64, "admin-" + "x" * 30, "short-Key-1"])
def test_prod_refuses_guessable_admin_keys(weak, tmp_path):
    with pytest.raises(ValueError, match="TAILOR_ADMIN_KEY"):
        Settings(env="prod", admin_key=weak, database_url=f"sqlite:///{tmp_path}/k.db")
    for strong in (secrets.token_urlsafe(32), secrets.token_hex(32), ADMIN_KEY):
        assert Settings(env="prod", admin_key=strong).env == "prod"


def test_keys_in_query_strings_are_refused_and_redacted_in_access_logs(live):
    resp = live.anon.get("/v1/models", params={"api_key": live.key})
    assert resp.status_code == 400 and resp.json()["type"].endswith("credentials-in-url")
    assert live.key not in resp.text
    path = f"/v1/models?limit=5&api_key={live.key}&x=1"
    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1,
                               '%s - "%s %s HTTP/%s" %d', ("1.2.3.4:5", "GET", path, "1.1", 400),
                               None)  # fmt: skip
    assert RedactQuery().filter(record)
    line = record.getMessage()
    assert live.key not in line and "limit=5" in line and "api_key=[redacted]&x=1" in line


def test_metrics_and_schema_access_follow_settings(run_live, make_settings, tmp_path):
    prod = make_settings(f"sqlite:///{tmp_path}/prod.db", env="prod")
    with run_live(prod) as live:
        for path in ("/metrics", "/openapi.json"):
            assert live.anon.get(path).status_code == 401, path
            assert live.http.get(path).status_code == 403, path
            assert live.admin.get(path).status_code == 200, path
        assert live.anon.get("/docs").status_code == 404
    opened = make_settings(f"sqlite:///{tmp_path}/open.db", env="prod", metrics_access="public",
                           openapi_access="off")  # fmt: skip
    with run_live(opened) as live:
        assert live.anon.get("/metrics").status_code == 200
        assert live.admin.get("/openapi.json").status_code == 404


def test_docs_page_renders_offline_in_headless_chromium(live, tmp_path):
    browser = shutil.which("chromium-headless-shell") or shutil.which("chromium")
    if browser is None:
        pytest.skip("no chromium here (make setup installs chromium-headless-shell as root)")
    html = live.anon.get("/docs").text
    assert "cdn." not in html and "/static/docs/swagger-ui-bundle.js" in html
    shot = tmp_path / "docs.png"
    args = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-proxy-server",
            "--virtual-time-budget=15000", "--window-size=1280,1600"]  # fmt: skip
    subprocess.run([*args, f"--screenshot={shot}", live.url + "/docs"], check=True,
                   capture_output=True, timeout=120)  # fmt: skip
    dom = subprocess.run([*args, "--dump-dom", live.url + "/docs"], check=True,
                         capture_output=True, text=True, timeout=120).stdout  # fmt: skip
    assert dom.count('class="opblock ') >= 8, dom[:2000]  # one per rendered operation
    assert "/v1/personalize" in dom and "/v1/models/{model_id}/predict" in dom
    with Image.open(shot) as im:
        assert im.size == (1280, 1600) and np.unique(np.asarray(im.convert("L"))).size > 8


def test_streamed_downloads_outlive_the_body_deadline(run_live, make_settings, tmp_path):
    """The deadline is for the request body; a long download afterwards is not cut off."""
    settings = make_settings(f"sqlite:///{tmp_path}/dl.db", body_timeout_s=0.5)
    with run_live(settings) as live:
        model = live.http.post("/v1/personalize", json={"classes": ["cat", "dog"]}).json()
        got = 0
        with live.http.stream("GET", model["weights_url"]) as resp:
            assert resp.status_code == 200
            for chunk in resp.iter_bytes(1 << 20):
                got += len(chunk)
                time.sleep(0.1)  # a slow reader: ~45 chunks, well past the 0.5 s deadline
        assert got == int(resp.headers["content-length"])


def test_pipelined_requests_are_not_cut_off_by_the_header_deadline(make_settings, serve_app,
                                                                   tmp_path):  # fmt: skip
    app = create_app(make_settings(f"sqlite:///{tmp_path}/pipe.db"))
    with serve_app(app, http=HeaderDeadlineProtocol, header_timeout_s=0.05) as server:
        sock = _connect(server.port)  # a cold personalize takes longer than 0.05 s
        auth = b"Authorization: Bearer " + ADMIN_KEY.encode() + b"\r\n"
        body = b'{"classes": ["cat", "dog"]}'
        slow = (b"POST /v1/personalize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + auth + b"Content-Length: %d\r\n\r\n" % len(body) + body)  # fmt: skip
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" + slow)  # the slow one queued
        got, deadline = b"", time.monotonic() + 60
        while got.count(b"HTTP/1.1 200") < 2 and time.monotonic() < deadline:
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += chunk
        sock.close()
        assert got.count(b"HTTP/1.1 200") == 2, got[:300]


def test_encoded_credential_names_are_redacted_too():
    from service.api.middleware import redact

    assert redact("/v1/models?k%65y=SECRET&limit=5") == "/v1/models?k%65y=[redacted]&limit=5"
    assert redact("/v1/models?access_token=abc") == "/v1/models?access_token=[redacted]"
    assert redact("/v1/models?limit=5") == "/v1/models?limit=5"
