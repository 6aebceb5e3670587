"""Fast schemathesis fuzzing in the suite: ~150 generated cases over every operation.

Uses the same per-operation loop as ``benchmarks/fuzz.py`` (which runs ≥ 2,000 cases) against a
real uvicorn + Redis app: no 5xx, responses conform to the app's own OpenAPI schema (bodies,
status codes, content types, problem+json errors included).
"""

from __future__ import annotations

import importlib.util
import secrets
import time
from pathlib import Path

import pytest
from service_testkit import ADMIN_KEY

schemathesis = pytest.importorskip("schemathesis")
SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "fuzz.py"


def _load_fuzz():
    spec = importlib.util.spec_from_file_location("bench_fuzz", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(params=["sqlite", "postgresql"])
def fuzz_db(request, tmp_path) -> str:
    """Both supported databases: PostgreSQL refuses what SQLite stores (NUL in text was a 500)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/f.db"
    return request.getfixturevalue("postgres_server").create_database(
        f"fuzz_{secrets.token_hex(6)}")  # fmt: skip


def test_schema_fuzzing_finds_no_5xx_and_no_nonconformance(run_live, make_settings, redis_server,
                                                          fuzz_db):  # fmt: skip
    fuzz = _load_fuzz()
    settings = make_settings(fuzz_db, redis_url=redis_server.url, rate_limit_per_minute=0)
    with run_live(settings) as live:
        headers = {"Authorization": f"Bearer {live.key}"}
        admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
        schema = schemathesis.openapi.from_url(live.url + "/openapi.json")
        ops = [result.ok() for result in schema.get_all_operations()]
        model_id = live.http.post("/v1/personalize", json={"classes": ["cat", "dog"]}).json()["id"]
        deadline = time.monotonic() + 40
        stats = {}
        targets = [(op, None, headers, "") for op in ops]
        targets += [(op, {"model_id": model_id}, headers, " [real id]") for op in ops
                    if "{model_id}" in op.path]  # fmt: skip
        targets += [(op, None, admin, " [admin]") for op in ops if "admin" in (op.tags or [])]
        for op, params, auth, suffix in targets:
            label = f"{op.method.upper()} {op.path}{suffix}"
            stats[label] = fuzz.OpStats()
            fuzz.fuzz_operation(op, live.url, auth, 5, stats[label], 0, deadline, params)
    assert len(ops) >= 10 and all(s.cases for s in stats.values()), {
        k: s.cases for k, s in stats.items()
    }
    assert sum(s.cases for s in stats.values()) >= 100
    findings = {k: s.examples for k, s in stats.items() if s.failures}
    assert not findings, findings
    assert not any(code >= 500 for s in stats.values() for code in s.statuses)
