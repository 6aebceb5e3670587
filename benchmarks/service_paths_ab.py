"""A/B of the issue-6 fast paths against the paths they replaced (not a test), in one process.

Both variants run in the same process (1 torch thread), interleaved (the order alternates each
repeat), medians reported; the app runs in-process (ASGI through Starlette's TestClient), so the
figures exclude the socket and isolate the changed steps:

* cold ``/personalize``: the served model kept as a :class:`service.runtime.LazyModule` (built on
  first /predict) vs built before answering (the old ``build_module`` on the request path);
* ``/predict`` base64 batch 64: the one-hop route (row cache, one worker thread, async app-state
  dependencies, ``model_dump_json``) vs a copy of the old route (SQL row lookup, three threadpool
  hops, sync dependencies, FastAPI response validation); their response bytes must be equal.

    .venv/bin/python benchmarks/service_paths_ab.py [--repeats 21]

Prints one line; writes ``benchmarks/results/service/paths_ab.json``.
"""

import argparse
import base64
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated

_HERE = Path(__file__).resolve().parent
if sys.path and Path(sys.path[0] or ".").resolve() == _HERE:
    sys.path[0] = str(_HERE.parent)  # benchmarks/service.py would shadow the service package

import torch  # noqa: E402
from fastapi import Depends, FastAPI, Request  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from starlette.concurrency import run_in_threadpool  # noqa: E402

from benchmarks._measure import Tasks, png, random_images  # noqa: E402
from benchmarks._server import ADMIN, ROOT, Redis, build_store  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "service" / "paths_ab.json"


def _old_route(app: FastAPI) -> None:
    """The /predict route as it was before the change, mounted at /old/{id}/predict."""
    from service import crud
    from service.api.deps import PrincipalDep
    from service.api.inputs import decode_batch, read_images
    from service.schemas import PredictResponse

    def settings_dep(request: Request):
        return request.app.state.settings

    def personalizer_dep(request: Request):
        return request.app.state.personalizer

    @app.post("/old/{model_id}/predict", response_model=PredictResponse)
    async def old_predict(model_id: str, request: Request, principal: PrincipalDep,
                          p: Annotated[object, Depends(personalizer_dep)],
                          settings: Annotated[object, Depends(settings_dep)]):  # fmt: skip
        def sql_get():
            with p.sessions() as s:
                return crud.get_model(s, model_id=model_id)

        row = await run_in_threadpool(sql_get)
        raw, names, top_k = await read_images(request, settings)
        batch = await decode_batch(raw, names, settings, p.runtime.device)
        predictions = await run_in_threadpool(p.predict, row, batch, top_k)
        return PredictResponse(model_id=model_id, predictions=predictions)


def _eager_class():
    from service import runtime as rt

    class Eager(rt.LazyModule):
        """The old cold path: the module is built before the response."""

        def __init__(self, state, device) -> None:
            super().__init__(state, device)
            _ = self.module

    return Eager


def _interleave(fns: dict, repeats: int, settle=lambda: None) -> dict[str, float]:
    """Median seconds of each fn; ``settle`` runs untimed after every call."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    items = list(fns.items())
    for i in range(repeats):
        for name, fn in items if i % 2 else items[::-1]:
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
            settle()
    return {k: statistics.median(v) for k, v in times.items()}


def _measure(client: TestClient, app: FastAPI, repeats: int) -> dict[str, float]:
    from service import personalization, runtime

    p, lazy, eager = app.state.personalizer, runtime.LazyModule, _eager_class()
    tasks = Tasks([c["name"] for c in client.get("/v1/catalogue").json()["classes"]])
    made: list[dict] = []

    def cold(cls) -> None:
        personalization.rt.LazyModule = cls
        try:
            made.append(client.post("/v1/personalize", json={"classes": tasks.next()}).json())
        finally:
            personalization.rt.LazyModule = lazy
        assert made[-1]["cache"] == "synthesized", made[-1]

    fns = {"cold_lazy": lambda: cold(lazy), "cold_eager": lambda: cold(eager)}
    _interleave(fns, 2, settle=p.flush)  # warm-up; the write-behind is timed in neither
    result = _interleave(fns, repeats, settle=p.flush)
    mid = made[-1]["id"]
    imgs = random_images(64, seed=64)
    body = json.dumps({"images": [base64.b64encode(png(im)).decode() for im in imgs]}).encode()
    post = {"content": body, "headers": {"content-type": "application/json"}}
    urls = {"predict64_new": f"/v1/models/{mid}/predict", "predict64_old": f"/old/{mid}/predict"}
    new, old = (client.post(u, **post) for u in urls.values())
    assert new.status_code == old.status_code == 200 and new.content == old.content, (
        new.content[:300], old.content[:300])
    result |= _interleave(
        {k: (lambda u=u: client.post(u, **post).raise_for_status()) for k, u in urls.items()},
        repeats,
    )
    return result


def main() -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=21)
    args = ap.parse_args()
    torch.set_num_threads(1)
    work = Path(tempfile.mkdtemp(prefix="tailor-ab-"))
    store = build_store(work, q=4, num_classes=12)
    redis = Redis(work)
    os.environ.update({
        "TAILOR_STORE_DIR": str(store), "TAILOR_ADMIN_KEY": ADMIN, "TAILOR_DEVICE": "cpu",
        "TAILOR_DATABASE_URL": f"sqlite:///{work}/bench.db", "TAILOR_REDIS_URL": redis.url,
        "TAILOR_MIGRATE_ON_START": "false", "TAILOR_RATE_LIMIT_PER_MINUTE": "0",
        "TAILOR_MAX_BATCH": "64", "HF_HUB_OFFLINE": "1",
    })  # fmt: skip
    from service.main import create_app

    app = create_app()
    _old_route(app)
    try:
        with TestClient(app, headers={"Authorization": f"Bearer {ADMIN}"}) as client:
            result = _measure(client, app, args.repeats)
    finally:
        redis.stop()
    result = {k: round(v * 1e3, 2) for k, v in result.items()} | {
        "repeats": args.repeats, "loadavg": os.getloadavg()}
    print("ms (medians, interleaved):", result)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
