"""``GET /health`` answers without a key, so it says only that the service is up: it told any caller how many
tenants the server holds (found by a walkthrough as a telecom support agent)."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi", reason="the [serve] extra is not installed (pip install -e '.[serve]')")

from fastapi.testclient import TestClient  # noqa: E402
from serving import KEYS  # noqa: E402
from test_served_session_lines import open_tenants  # noqa: E402

from sam_model.serve.http import create_app  # noqa: E402


def test_health_says_only_that_the_service_is_up(tmp_path):
    tenants = open_tenants(tmp_path)
    http = TestClient(create_app(tenants))
    assert len(tenants.tenants) == len(KEYS)  # there is a count it could tell
    for headers in ({}, {"X-API-Key": KEYS["acme"]}, {"X-API-Key": "not-a-key-0123456789"}):
        r = http.get("/health", headers=headers)
        assert r.status_code == 200 and r.json() == {"status": "ok"}, r.text
    tenants.close()
