"""Service benchmark (not a test): cold/warm /personalize, download MB/s, /predict vs raw torch.

Runs the real API under uvicorn in a subprocess (so client and server do not share a GIL) on a
tiny-random but full-size artifact (ResNet-18, Q bases), with a real redis-server when one is
installed, and measures in one run:

* cold ``/personalize`` latency (never-seen class sets) ÷ the time for torch to read the Q bases
  once (a ``clone`` of the stacked bases, as in ``benchmarks/synthesis.py``: the
  memory-bandwidth bound of synthesis; goal ≤ 2.0);
* warm ``/personalize`` p50;
* weight download throughput (MB/s);
* ``/predict`` batch-64 latency ÷ raw ``model(x)`` on the same batch (goal ≤ 1.2).

    .venv/bin/python benchmarks/service.py [--q 4] [--repeats 10]

Prints a table and writes JSON under ``benchmarks/results/``.
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np
import torch
import torchvision
from PIL import Image
from safetensors.torch import load as st_load

ROOT = Path(__file__).resolve().parents[1]
ADMIN = "bench-admin-" + "k" * 24


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(url: str, proc: subprocess.Popen, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise TimeoutError(url)


def _start_redis(workdir: Path) -> tuple[subprocess.Popen | None, str | None]:
    binary = shutil.which("redis-server")
    if binary is None:
        return None, None
    port = _free_port()
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(workdir)]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    return proc, f"redis://127.0.0.1:{port}/0"


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _timed_after(prepare, fn) -> float:
    prepare()
    return _timed(fn)


def _median_time(fn, repeats: int) -> float:
    return statistics.median(_timed(fn) for _ in range(repeats))


def _await_write_behind(http: httpx.Client, model_id: str) -> None:
    """Wait until the server has finished the write-behind of a model (its digest is set)."""
    for _ in range(600):
        if http.get(f"/v1/models/{model_id}").json().get("weights_sha256"):
            return
        time.sleep(0.01)


def _metric_mean(http: httpx.Client, name: str) -> float:
    """Mean of a Prometheus histogram from the server's /metrics (sum ÷ count)."""
    total = count = 0.0
    for line in http.get("/metrics").text.splitlines():
        if line.startswith(f"{name}_sum"):
            total += float(line.rsplit(" ", 1)[1])
        elif line.startswith(f"{name}_count"):
            count += float(line.rsplit(" ", 1)[1])
    return total / count if count else float("nan")


def _interleaved(a, b, repeats: int, before_b=lambda: None) -> tuple[float, float]:
    """Medians of ``a`` and ``b`` timed alternately, so load from other processes on this
    shared machine hits both sides of a ratio alike; ``before_b`` runs untimed (e.g. waiting
    for the server's write-behind, which would otherwise compete with ``b``)."""
    ta, tb = [], []
    for _ in range(repeats):
        ta.append(_timed(a))
        tb.append(_timed_after(before_b, b))
    return statistics.median(ta), statistics.median(tb)


def _bases_readers(store: Path):
    """Two ways for torch to read every byte of the stacked Q bases once.

    ``clone`` (read + fresh allocation; the baseline of ``benchmarks/synthesis.py``) and ``sum``
    (read only, the strict memory-bandwidth bound). Synthesis sits between: it reads the Q
    bases and writes one model into fresh memory.
    """
    from model_store.taper import load_taper

    stacked = list(load_taper(store, device="cpu").bases.values())
    floats = [t for t in stacked if t.is_floating_point()]

    def clone() -> None:
        with torch.inference_mode():
            for t in stacked:
                t.clone()

    def read_sum() -> None:
        with torch.inference_mode():
            for t in floats:
                t.sum()

    clone()
    read_sum()
    return clone, read_sum


def _png(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(array).save(buf, format="PNG")
    return buf.getvalue()


def measure(http: httpx.Client, store: Path, repeats: int) -> dict:
    """All measurements against a running server (cold/warm personalize, download, predict)."""
    names = [c["name"] for c in http.get("/v1/catalogue").json()["classes"]]
    tasks = itertools.permutations(names, 3)
    responses = []

    def cold() -> None:
        responses.append(http.post("/v1/personalize", json={"classes": list(next(tasks))}))
        assert responses[-1].json()["cache"] == "synthesized", responses[-1].text

    clone, read_sum = _bases_readers(store)
    cold_t, clone_t, sum_t = [], [], []
    for _ in range(repeats):  # interleaved: load from other processes hits every column alike
        cold_t.append(_timed(cold))
        _await_write_behind(http, responses[-1].json()["id"])  # untimed: let the server idle
        clone_t.append(_timed(clone))
        sum_t.append(_timed(read_sum))
    cold_s, read_s, sum_s = (statistics.median(v) for v in (cold_t, clone_t, sum_t))
    synth_mean = _metric_mean(http, "tailor_synthesis_seconds")
    model = responses[-1].json()
    body = {"classes": model["classes"]}
    warm = [_timed(lambda: http.post("/v1/personalize", json=body)) for _ in range(30)]
    payload = http.get(model["weights_url"]).content
    download = _median_time(lambda: http.get(model["weights_url"]).raise_for_status(), repeats)
    return {
        "bases_read_s": read_s,
        "cold_personalize_s": cold_s,
        "cold_over_read": cold_s / read_s,
        "bases_sum_s": sum_s,
        "cold_over_sum": cold_s / sum_s,
        "server_synthesis_mean_s": synth_mean,
        "warm_personalize_p50_s": statistics.median(warm),
        "download_MBps": len(payload) / 1e6 / download,
        "weights_MB": len(payload) / 1e6,
        **measure_predict(http, model, payload, repeats),
    }


def measure_predict(http: httpx.Client, model: dict, payload: bytes, repeats: int) -> dict:
    """/predict on 64 PNGs vs raw torchvision ``model(x)`` on the same batch, interleaved."""
    rng = np.random.default_rng(0)
    imgs = [rng.integers(0, 256, (32, 32, 3), dtype=np.uint8) for _ in range(64)]
    files = [("files", (f"{i}.png", _png(im), "image/png")) for i, im in enumerate(imgs)]
    url = model["predict_url"]
    http.post(url, files=files).raise_for_status()
    net = torchvision.models.resnet18(num_classes=3)
    net.load_state_dict(st_load(payload), strict=True)
    net.eval()
    from model_store.images import to_batch

    x = to_batch(imgs)

    def raw() -> None:
        with torch.inference_mode():
            net(x)

    raw()
    predict_s, raw_s = _interleaved(lambda: http.post(url, files=files).raise_for_status(), raw,
                                    repeats)  # fmt: skip
    return {
        "predict64_s": predict_s,
        "raw_model64_s": raw_s,
        "predict_over_raw": predict_s / raw_s,
    }


def main(argv: list[str] | None = None) -> dict:
    """Build the artifact, start redis + uvicorn, measure, print and save."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--q", type=int, default=4, help="number of bases")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args(argv)
    from model_store.testing import make_tiny_taper

    work = Path(tempfile.mkdtemp(prefix="tailor-bench-"))
    make_tiny_taper(work / "store", num_classes=12, Q=args.q, seed=0)
    redis_proc, redis_url = _start_redis(work)
    port = _free_port()
    env = {**os.environ, "TAILOR_STORE_DIR": str(work / "store"), "TAILOR_ADMIN_KEY": ADMIN,
           "TAILOR_DATABASE_URL": f"sqlite:///{work}/bench.db", "TAILOR_DEVICE": "cpu"}  # fmt: skip
    if redis_url:
        env["TAILOR_REDIS_URL"] = redis_url
    cmd = [sys.executable, "-m", "uvicorn", "service.main:create_app", "--factory",
           "--port", str(port), "--log-level", "warning"]  # fmt: skip
    server = subprocess.Popen(cmd, env=env, cwd=ROOT)
    try:
        base = f"http://127.0.0.1:{port}"
        _wait(base + "/readyz", server)
        headers = {"Authorization": f"Bearer {ADMIN}"}
        with httpx.Client(base_url=base, headers=headers, timeout=120) as http:
            result = measure(http, work / "store", args.repeats)
    finally:
        server.terminate()
        server.wait(30)
        if redis_proc:
            redis_proc.terminate()
        shutil.rmtree(work, ignore_errors=True)
    result.update(q=args.q, redis=bool(redis_url), torch_threads=torch.get_num_threads(),
                  device="cpu", cpus=os.cpu_count())  # fmt: skip
    _report(result, args.out)
    return result


def _report(r: dict, out: Path) -> None:
    rows = [
        ("torch reads Q bases: clone", f"{r['bases_read_s'] * 1e3:.1f} ms", ""),
        ("torch reads Q bases: sum", f"{r['bases_sum_s'] * 1e3:.1f} ms", ""),
        ("cold /personalize (median)", f"{r['cold_personalize_s'] * 1e3:.1f} ms",
         f"÷ clone = {r['cold_over_read']:.2f}, ÷ sum = {r['cold_over_sum']:.2f} (goal ≤ 2.0)"),
        ("  of which synthesis (server)", f"{r['server_synthesis_mean_s'] * 1e3:.1f} ms", "mean"),
        ("warm /personalize p50", f"{r['warm_personalize_p50_s'] * 1e3:.1f} ms", ""),
        ("weights download", f"{r['download_MBps']:.0f} MB/s", f"{r['weights_MB']:.1f} MB"),
        ("/predict batch 64", f"{r['predict64_s'] * 1e3:.1f} ms",
         f"÷ raw = {r['predict_over_raw']:.2f} (goal ≤ 1.2)"),
        ("raw model(x) batch 64", f"{r['raw_model64_s'] * 1e3:.1f} ms", ""),
    ]  # fmt: skip
    print(f"\nTailor service benchmark (Q={r['q']}, redis={r['redis']}, cpu x{r['cpus']})")
    for name, value, note in rows:
        print(f"  {name:30s} {value:>12s}  {note}")
    out.mkdir(parents=True, exist_ok=True)
    path = out / "service.json"
    path.write_text(json.dumps(r, indent=2))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
