"""Single-caller latencies: cold/warm /personalize, weight downloads, /predict vs raw torch."""

from __future__ import annotations

import time

import httpx
import torch
import torchvision
from safetensors.torch import load as st_load

from benchmarks._measure import (
    Baselines,
    Tasks,
    b64,
    decode_fn,
    interleaved,
    median,
    percentile,
    png,
    random_images,
    timed,
)


def await_write_behind(http: httpx.Client, model_id: str, timeout: float = 30) -> None:
    """Wait until the server has stored a new model's bytes (its digest is recorded in SQL)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if http.get(f"/v1/models/{model_id}").json().get("weights_sha256"):
            return
        time.sleep(0.01)


def personalize(http: httpx.Client, tasks: Tasks, base: Baselines, *, repeats: int,
                warm_n: int, workers: int) -> tuple[dict, dict]:  # fmt: skip
    """Cold (never-seen task) latency interleaved with the read-the-bases yardsticks and the
    in-process synthesis, then warm p50/p90 of one repeated task. Returns (figures, a model)."""
    made: list[dict] = []
    pending: list[str] = []

    def cold() -> None:
        resp = http.post("/v1/personalize", json={"classes": tasks.next()})
        resp.raise_for_status()
        made.append(resp.json())
        assert made[-1]["cache"] == "synthesized", made[-1]
        pending.append(made[-1]["id"])

    def settle() -> None:  # untimed: the write-behind must not compete with the next timing
        while pending:
            await_write_behind(http, pending.pop())

    t = interleaved({"cold": cold, "synth": base.synth, "sum": base.read_sum,
                     "minimum": base.minimum, "copy": base.copy, "clone": base.clone},
                    repeats, between=settle)  # fmt: skip
    model = made[-1]
    body = {"classes": model["classes"]}
    for _ in range(2 * workers):  # every worker gets it into its LRU (from Redis)
        http.post("/v1/personalize", json=body).raise_for_status()
    warm = [timed(lambda: http.post("/v1/personalize", json=body).raise_for_status())
            for _ in range(warm_n)]  # fmt: skip
    cold_s, synth_s = median(t["cold"]), median(t["synth"])
    sum_s, copy_s, clone_s = median(t["sum"]), median(t["copy"]), median(t["clone"])
    min_s = median(t["minimum"])
    return {
        "bases_MB": base.nbytes / 1e6,
        "read_sum_s": sum_s, "read_copy_s": copy_s, "read_clone_s": clone_s,
        "read_GBps": base.nbytes / sum_s / 1e9,
        "cold_personalize_s": cold_s,
        "cold_over_sum": cold_s / sum_s, "cold_over_copy": cold_s / copy_s,
        "cold_over_clone": cold_s / clone_s,
        "read_minimum_s": min_s, "minimum_over_sum": min_s / sum_s,
        "cold_over_minimum": cold_s / min_s, "synthesis_over_minimum": synth_s / min_s,
        "cold_over_synthesis": cold_s / synth_s,
        "synthesis_s": synth_s,
        "synthesis_over_sum": synth_s / sum_s, "synthesis_over_copy": synth_s / copy_s,
        "cold_minus_synthesis_s": cold_s - synth_s,
        "warm_personalize_p50_s": median(warm), "warm_personalize_p90_s": percentile(warm, 90),
    }, model  # fmt: skip


FORMATS = {
    "safetensors_fp32": {},
    "safetensors_fp16": {"dtype": "fp16"},
    "onnx": {"format": "onnx"},
}


def downloads(http: httpx.Client, model: dict, *, repeats: int) -> dict:
    """MB/s of each download format once cached; the first ONNX download includes the export."""
    url = model["weights_url"]
    onnx_first = timed(lambda: http.get(url, params=FORMATS["onnx"]).raise_for_status())
    sizes: dict[str, int] = {}

    def fetch(name: str, params: dict):
        def run() -> None:
            resp = http.get(url, params=params)
            resp.raise_for_status()
            sizes[name] = len(resp.content)

        return run

    t = interleaved({name: fetch(name, p) for name, p in FORMATS.items()}, repeats)
    out: dict = {"onnx_first_download_s": onnx_first}
    for name in FORMATS:
        out[f"download_{name}_MB"] = sizes[name] / 1e6
        out[f"download_{name}_s"] = median(t[name])
        out[f"download_{name}_MBps"] = sizes[name] / 1e6 / median(t[name])
    return out


def _raw_net(http: httpx.Client, model: dict, device: torch.device) -> torch.nn.Module:
    net = torchvision.models.resnet18(num_classes=len(model["classes"]))
    net.load_state_dict(st_load(http.get(model["weights_url"]).content), strict=True)
    return net.eval().requires_grad_(False).to(device)


def predict(http: httpx.Client, model: dict, *, batches: list[int], repeats: int,
            workers: int, device: torch.device) -> dict:  # fmt: skip
    """/predict (multipart and base64 JSON) at each batch size vs raw ``model(x)`` on the same
    batch in this process on the server's device (the input already there: the yardstick is
    the forward pass), plus the server's own decode path timed here (to split overhead)."""
    from model_store.images import to_batch

    net, url = _raw_net(http, model, device), model["predict_url"]
    fns = {}
    for b in batches:
        imgs = random_images(b, seed=b)
        pngs = [png(im) for im in imgs]
        files = [("files", (f"{i}.png", p, "image/png")) for i, p in enumerate(pngs)]
        body = {"images": [b64(p) for p in pngs], "top_k": 1}
        x = to_batch(imgs).to(device)

        def raw(x=x) -> None:
            with torch.inference_mode():
                net(x)
            if device.type == "cuda":
                torch.cuda.synchronize(device)

        fns[f"multipart{b}"] = lambda files=files: http.post(url, files=files).raise_for_status()
        fns[f"base64_{b}"] = lambda body=body: http.post(url, json=body).raise_for_status()
        fns[f"raw{b}"] = raw
        fns[f"decode_png{b}"] = decode_fn(pngs, as_base64=False)
        fns[f"decode_b64_{b}"] = decode_fn(pngs, as_base64=True)
    for _ in range(2 * workers):  # warm-up: every worker's LRU, allocator, kernels
        for fn in fns.values():
            fn()
    t = {k: median(v) for k, v in interleaved(fns, repeats).items()}
    rows = []
    for b in batches:
        raw_s = t[f"raw{b}"]
        row = {"batch": b, "raw_s": raw_s}
        for kind, dec in (("multipart", "png"), ("base64", "b64")):
            server_s = t[f"multipart{b}"] if kind == "multipart" else t[f"base64_{b}"]
            decode_s = t[f"decode_{dec}{b}" if dec == "png" else f"decode_b64_{b}"]
            row |= {f"{kind}_s": server_s, f"{kind}_over_raw": server_s / raw_s,
                    f"{kind}_decode_s": decode_s,
                    f"{kind}_transport_s": server_s - raw_s - decode_s}  # fmt: skip
        rows.append(row)
    return {"predict": rows}
