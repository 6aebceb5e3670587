"""The service half of ``benchmarks/self_improvement.py``: /refine and the cost of a call.

Runs the real app in-process (``create_app`` on the deployed artifact, a fresh SQLite, no
Redis) through Starlette's TestClient: the requests an app would send, the service's own
thresholds set to the ones chosen on validation. Timings are wall time per call on this
process's CPU threads; the ratio compares calls made the same way, task by task.
"""

from __future__ import annotations

import base64
import io
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image
from tqdm import tqdm

ADMIN = "bench-admin-Vb4nQ8rT2xL6mZ9pK3sW7yH5"
REFINE_IMAGES = 128


def _b64(images: np.ndarray) -> list[str]:
    out = []
    for im in images:
        buf = io.BytesIO()
        Image.fromarray(im).save(buf, format="PNG")
        out.append(base64.b64encode(buf.getvalue()).decode())
    return out


def _timed(fn):
    t0 = time.perf_counter()
    resp = fn()
    assert resp.status_code == 200, resp.text
    return resp.json(), time.perf_counter() - t0


def service_figures(args, bundle, data, tasks, scorer, choice, method) -> dict:
    """/refine vs parent vs the old /refine, and images-only cost ratios, on test tasks."""
    from fastapi.testclient import TestClient

    from service.core.settings import Settings
    from service.main import create_app

    images = np.asarray(data.images)[np.asarray(data.split) == 2]
    names, domains = list(bundle.class_names), list(bundle.domains)
    chosen = [t for t in tasks if t.scope == "domain"][: args.service_tasks]
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(store_dir=Path(args.store), database_url=f"sqlite:///{tmp}/b.db",
                            admin_key=ADMIN, device="cpu", max_batch=256,
                            rate_limit_per_minute=0, infer_min_share=choice["min_share"],
                            infer_min_domain_conf=choice["min_domain_conf"])  # fmt: skip
        with TestClient(create_app(settings)) as client:
            key = client.post("/v1/keys", json={"name": "bench"},
                              headers={"Authorization": f"Bearer {ADMIN}"}).json()["key"]
            client.headers["Authorization"] = f"Bearer {key}"
            rows = [_one_task(client, t, images, names, domains, scorer, method)
                    for t in tqdm(chosen, desc="service: refine + cost", unit="task")]
    ratios = [r["images_only_s"] / (r["predict_s"] + r["cold_personalize_s"]) for r in rows]
    return {"rows": rows, "ratio_median": statistics.median(ratios),
            "ratio_of_sums": sum(r["images_only_s"] for r in rows)
            / sum(r["predict_s"] + r["cold_personalize_s"] for r in rows),
            "refine_images": REFINE_IMAGES}


def _one_task(client, t, images, names, domains, scorer, method) -> dict:
    """One task: the three timed calls (the images-only one first, so it is cold), then the
    parent, its refinement and the old refinement."""
    stream = t.stream[:REFINE_IMAGES]
    b64 = _b64(images[stream])
    made, t_img = _timed(lambda: client.post("/v1/personalize", json={"images": b64}))  # cold
    _, t_pred = _timed(lambda: client.post(f"/v1/models/{made['id']}/predict",
                                           json={"images": b64}))  # fmt: skip
    other = [d for d in domains if d != made["domain"]][t.classes[0] % (len(domains) - 1)]
    _, t_cold = _timed(lambda: client.post("/v1/personalize", json={
        "classes": [names[i] for i in reversed(t.classes)], "domain": other}))  # fmt: skip
    parent, _ = _timed(lambda: client.post("/v1/personalize", json={
        "classes": [names[i] for i in t.classes]}))  # fmt: skip
    refined, _ = _timed(lambda: client.post(f"/v1/models/{parent['id']}/refine",
                                            json={"images": b64}))  # fmt: skip
    ev, idx = t.evaluate, [names.index(c) for c in refined["classes"]]
    dom = domains.index(refined["domain"]) if refined["domain"] else None
    pred = scorer.predictions(t.classes, None, method, stream)
    shares = tuple(round(float((pred == c).mean()), 6) for c in t.classes)
    return {"classes": t.classes, "domain": t.domain,
            "parent_acc": scorer.accuracy(t.classes, None, method, ev),
            "refined_acc": scorer.accuracy(idx, dom, refined["method"], ev),
            "refined_changed": refined["changed"], "refined_domain": refined["domain"],
            "old_refine_acc": scorer.accuracy(t.classes, None, "taper", ev, weights=shares),
            "images_only_s": t_img, "predict_s": t_pred, "cold_personalize_s": t_cold}
