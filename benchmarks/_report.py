"""The service benchmark's table (stdout, also pasted into docs/results-service.md) and JSON."""

from __future__ import annotations

import json
from pathlib import Path


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def _latency_rows(r: dict) -> list[tuple[str, str, str]]:
    return [
        ("read Q bases once: sum / copy / clone",
         f"{_ms(r['read_sum_s'])}", f"copy {_ms(r['read_copy_s'])}, clone "
         f"{_ms(r['read_clone_s'])}; {r['bases_MB']:.0f} MB at {r['read_GBps']:.1f} GB/s"),
        ("physical minimum: read Q bases, write 1", _ms(r["read_minimum_s"]),
         f"÷ sum {r['minimum_over_sum']:.2f}"),
        ("cold /personalize (median)", _ms(r["cold_personalize_s"]),
         f"÷ minimum {r['cold_over_minimum']:.2f} (CPU goal ≤ 2), ÷ synthesis "
         f"{r['cold_over_synthesis']:.2f} (GPU goal ≤ 3), ÷ sum {r['cold_over_sum']:.2f}"),
        ("synthesis in-process (median)", _ms(r["synthesis_s"]),
         f"÷ sum {r['synthesis_over_sum']:.2f} (GPU goal ≤ 2), ÷ minimum "
         f"{r['synthesis_over_minimum']:.2f}; cold − synthesis = "
         f"{_ms(r['cold_minus_synthesis_s'])}"),
        ("warm /personalize p50 / p90", _ms(r["warm_personalize_p50_s"]),
         f"p90 {_ms(r['warm_personalize_p90_s'])}"),
    ]  # fmt: skip


def _download_rows(r: dict) -> list[tuple[str, str, str]]:
    rows = [(f"download {name}", f"{r[f'download_{name}_MBps']:.0f} MB/s",
             f"{r[f'download_{name}_MB']:.1f} MB in {_ms(r[f'download_{name}_s'])}")
            for name in ("safetensors_fp32", "safetensors_fp16", "onnx")]  # fmt: skip
    rows.append(("first ONNX download (export)", _ms(r["onnx_first_download_s"]), "then cached"))
    return rows


def _predict_rows(r: dict) -> list[tuple[str, str, str]]:
    rows = []
    for p in r["predict"]:
        b = p["batch"]
        goal = " (goal ≤ 1.2 CPU, 1.5 GPU)" if b == 64 else ""
        rows.append((f"raw model(x) batch {b}", _ms(p["raw_s"]), "same process type, threads"))
        for kind in ("multipart", "base64"):
            rows.append((f"/predict {kind} batch {b}", _ms(p[f"{kind}_s"]),
                         f"÷ raw {p[f'{kind}_over_raw']:.2f}{goal}; decode "
                         f"{_ms(p[f'{kind}_decode_s'])}, transport "
                         f"{_ms(p[f'{kind}_transport_s'])}"))  # fmt: skip
    return rows


def _load_rows(r: dict) -> list[tuple[str, str, str]]:
    rows = []
    for c in r["concurrency"]:
        rows.append((f"personalize/s, {c['callers']} callers", f"{c['cold_per_s']:.1f} cold",
                     f"{c['cold_sustained_per_s']:.1f}/s incl. write-behind; "
                     f"{c['warm_per_s']:.0f} warm/s; p50 cold {_ms(c['cold_p50_s'])}, "
                     f"warm {_ms(c['warm_p50_s'])}"))  # fmt: skip
    mem = r["memory"]
    for key, m in mem.items():
        if not key.startswith("malloc_"):
            continue
        rows.append((f"RSS vs N ({key})", f"{m['rss_final_MB']:.0f} MB",
                     f"start {m['rss_start_MB']:.0f} MB, slope past budget "
                     f"{m['rss_slope_MB_per_model']:+.1f} MB/model, plateau={m['plateau']}; "
                     f"cold {_ms(m['interleaved_cold_personalize_s'])} "
                     f"(÷ sum {m['interleaved_cold_over_sum']:.2f}), during the walk "
                     f"{_ms(m['cold_personalize_s'])}"))  # fmt: skip
    return rows


def table(r: dict) -> str:
    """The benchmark's table as aligned text."""
    m = r["meta"]
    head = (f"Tailor service benchmark: device={m['device']} workers={m['workers']} Q={m['q']} "
            f"threads={m['threads']} "
            f"malloc={m['malloc']} cpus={m['cpus']} load {m['loadavg_before'][0]:.2f}"
            f"→{m['loadavg_after'][0]:.2f}{' (quick)' if m['quick'] else ''}")  # fmt: skip
    rows = _latency_rows(r) + _download_rows(r) + _predict_rows(r) + _load_rows(r)
    width = max(len(name) for name, _, _ in rows)
    lines = [head] + [f"  {n:{width}s} {v:>14s}  {note}" for n, v, note in rows]
    return "\n".join(lines)


def report(result: dict, path: Path) -> None:
    """Print the table and write the JSON."""
    print(table(result))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {path} and {result['memory']['png']}")
