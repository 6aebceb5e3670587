"""Schemathesis fuzzing of the API against its own OpenAPI schema (not a test; ≥ 2,000 cases).

Starts a real stack (uvicorn + Redis + SQLite, loopback only; see ``livestack.py``), loads
``/openapi.json`` from it, and for every operation draws positive (schema-valid) and negative
(schema-violating) cases with Hypothesis, sends each with a valid client key, and runs the checks
``not_a_server_error`` (no 5xx), ``response_schema_conformance`` (the body matches the declared
schema for that status, problem+json errors included), ``status_code_conformance`` and
``content_type_conformance``. Operations taking a ``model_id`` are fuzzed both with random ids and
with the id of a real model, so the handlers behind the 404 get fuzzed too.

    .venv/bin/python benchmarks/fuzz.py [--cases 2000] [--workers 1] [--seed 0]

Prints a table per operation and writes JSON under ``benchmarks/results/fuzz/``.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import sys
import time
from pathlib import Path

import httpx
import hypothesis
import hypothesis.errors
import requests
import schemathesis
from hypothesis import HealthCheck, Phase
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the `service` package, not benchmarks/service.py
from benchmarks.livestack import LiveStack  # noqa: E402

CHECKS = [not_a_server_error, response_schema_conformance, status_code_conformance,
          content_type_conformance]  # fmt: skip
MODES = (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE)


class OpStats:
    """Counts for one operation: cases, statuses, failures by check (with one example each)."""

    def __init__(self) -> None:
        self.cases = 0
        self.statuses: collections.Counter[int] = collections.Counter()
        self.failures: collections.Counter[str] = collections.Counter()
        self.examples: dict[str, str] = {}

    def as_dict(self) -> dict:
        statuses = {str(k): v for k, v in sorted(self.statuses.items())}
        return {"cases": self.cases, "statuses": statuses, "failures": dict(self.failures),
                "examples": self.examples}  # fmt: skip


def _record(stats: OpStats, case, response, headers: dict, deadline: float) -> None:
    stats.cases += 1
    stats.statuses[response.status_code] += 1
    try:
        case.validate_response(response, checks=CHECKS, headers=headers)
    except (Exception, BaseExceptionGroup) as exc:  # noqa: BLE001 - any check failure is a finding
        for failure in getattr(exc, "exceptions", [exc]):
            name = type(failure).__name__
            title = getattr(failure, "title", "") or str(failure).splitlines()[0][:120]
            label = f"{name}: {title}"
            stats.failures[label] += 1
            stats.examples.setdefault(label, f"{str(failure)[:800]}\n{case.as_curl_command()}")
    if time.monotonic() > deadline:
        raise TimeoutError


def fuzz_operation(op, base_url: str, headers: dict, n: int, stats: OpStats, seed: int,
                   deadline: float, path_parameters: dict | None = None) -> None:  # fmt: skip
    """Draw up to ``n`` cases per generation mode for one operation and check each response."""
    session = requests.Session()
    for mode in MODES:
        try:
            strategy = op.as_strategy(generation_mode=mode, path_parameters=path_parameters)
        except Exception as exc:  # noqa: BLE001 - e.g. nothing negative to generate
            stats.examples.setdefault(f"skipped {mode.value}", repr(exc)[:300])
            continue

        @hypothesis.settings(max_examples=n, deadline=None, database=None, derandomize=False,
                             phases=[Phase.generate], suppress_health_check=list(HealthCheck))
        @hypothesis.seed(seed)
        @hypothesis.given(strategy)
        def run(case):  # fmt: skip
            response = case.call(base_url=base_url, headers=headers, session=session, timeout=60)
            _record(stats, case, response, headers, deadline)

        try:
            run()
        except TimeoutError:
            return
        except (hypothesis.errors.Unsatisfiable, hypothesis.errors.FailedHealthCheck) as exc:
            stats.examples.setdefault(f"unsatisfiable {mode.value}", repr(exc)[:300])


def _real_model_id(url: str, headers: dict) -> str:
    resp = httpx.post(url + "/v1/personalize", json={"classes": ["cat", "dog"]}, headers=headers,
                      timeout=120)  # fmt: skip
    resp.raise_for_status()
    return resp.json()["id"]


def run_fuzz(stack: LiveStack, cases: int, seed: int, max_seconds: float) -> dict:
    """Fuzz every operation until ``cases`` are spent (spread evenly) or time runs out."""
    headers = {"Authorization": f"Bearer {stack.make_keys(1)[0]}"}
    schema = schemathesis.openapi.from_url(stack.url + "/openapi.json")
    ops = [result.ok() for result in schema.get_all_operations()]
    model_id = _real_model_id(stack.url, headers)
    targets = [(op, None, headers, "") for op in ops]
    targets += [(op, {"model_id": model_id}, headers, " [real id]") for op in ops
                if "{model_id}" in op.path]  # fmt: skip
    targets += [(op, None, stack.admin_headers, " [admin]") for op in ops
                if "admin" in (op.tags or [])]  # fmt: skip
    per_target = math.ceil(cases / len(targets) / len(MODES))
    deadline = time.monotonic() + max_seconds
    stats: dict[str, OpStats] = collections.defaultdict(OpStats)
    rounds = 0
    while sum(s.cases for s in stats.values()) < cases and time.monotonic() < deadline:
        for op, params, auth, suffix in targets:
            label = f"{op.method.upper()} {op.path}{suffix}"
            fuzz_operation(op, stack.url, auth, per_target, stats[label], seed + rounds,
                           deadline, params)  # fmt: skip
        rounds += 1  # small operations exhaust early; later rounds use new seeds
    return {"operations": {k: v.as_dict() for k, v in sorted(stats.items())}, "rounds": rounds}


def _report(result: dict, out: Path) -> Path:
    ops = result["operations"]
    print(f"\nschemathesis {result['schemathesis']} fuzzing ({result['workers']} worker(s), "
          f"{result['seconds']:.0f} s)")  # fmt: skip
    print(f"  {'operation':48s} {'cases':>6s} {'5xx':>4s} {'fail':>5s}  statuses")
    for name, s in ops.items():
        fivexx = sum(v for k, v in s["statuses"].items() if k.startswith("5"))
        statuses = " ".join(f"{k}:{v}" for k, v in s["statuses"].items())
        fails = sum(s["failures"].values())
        print(f"  {name:48s} {s['cases']:6d} {fivexx:4d} {fails:5d}  {statuses}")
    print(f"  {'total':48s} {result['cases']:6d} {result['server_errors']:4d} "
          f"{result['failures']:5d}")  # fmt: skip
    for name, s in ops.items():
        for label, count in s["failures"].items():
            print(f"\n[{name}] {label} x{count}\n{s['examples'][label]}")
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"fuzz-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps(result, indent=2))
    print(f"wrote {path}")
    return path


def main(argv: list[str] | None = None) -> dict:
    """Start the stack, fuzz, print the table, write JSON; exit status 1 on any finding."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=2000, help="total generated cases (at least)")
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-seconds", type=float, default=1800)
    parser.add_argument("--database-url", help="fuzz over this registry, e.g. a scratch "
                        "postgresql+psycopg://… (PostgreSQL refuses what SQLite stores); "
                        "default: a scratch SQLite")  # fmt: skip
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "fuzz")
    args = parser.parse_args(argv)
    t0 = time.monotonic()
    env = {"TAILOR_RATE_LIMIT_PER_MINUTE": "1000000", "TAILOR_RATE_LIMIT_BURST": "100000"}
    if args.database_url:
        env.update(TAILOR_DATABASE_URL=args.database_url, TAILOR_MIGRATE_ON_START="true")
    with LiveStack(workers=args.workers, env=env) as stack:
        result = run_fuzz(stack, args.cases, args.seed, args.max_seconds)
    ops = result["operations"].values()
    result.update(
        schemathesis=schemathesis.__version__ if hasattr(schemathesis, "__version__") else "4",
        workers=args.workers, seed=args.seed,
        database=(args.database_url or "sqlite").split("+")[0].split(":")[0],
        seconds=time.monotonic() - t0,
        checks=[c.__name__ for c in CHECKS], cases=sum(s["cases"] for s in ops),
        server_errors=sum(v for s in ops for k, v in s["statuses"].items() if k.startswith("5")),
        failures=sum(sum(s["failures"].values()) for s in ops),
    )  # fmt: skip
    result["path"] = str(_report(result, args.out))
    return result


if __name__ == "__main__":
    raise SystemExit(1 if main()["failures"] else 0)
