"""``tailor train request-reader``: fine-tune the text encoder to read task descriptions.

Rows are the resolution sets' natural requests (``benchmarks/data/resolution_*.jsonl``: a
``description``, the expected ``expect`` classes or ``null`` for a request to ask back, and a
``domain``). Each epoch shows its loss; with ``--val`` files, exact reading accuracy on them
after each epoch. The model (``model_store.request_model``) and its ``train.json`` go to
``--out``; ``reader.json`` names the files it was trained on, so a benchmark can refuse to
score it on them. The recipe (AdamW, 5e-5 on the encoder and 1e-3 on the heads, a learning
rate that rises over the first 6 % of steps while it decays linearly to zero over all of them,
batch 16, 4 epochs) was chosen on sets 78-89 (docs/results-resolution.md, stop 57), the
label-wise attention head on sets 90-93 (stop 58), and the counterfactual requests of
``trainer.reader.augment`` (a class named and ruled out, something the catalogue lacks asked
for) on sets 90-97 (stop 59); on two CPU cores an epoch over ~7,600 requests takes about five
minutes.

    tailor train request-reader --out .tailor/request-reader --val <test sets>
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from model_store.device import pick_device
from model_store.request_model import HEADS, RequestModel, RequestReader, reading, save_reader
from trainer.reader.augment import counterfactuals, foreign

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data"


def _jsonl(paths: list[Path]):
    """Every row of the JSON Lines files ``paths`` (blank lines skipped), with its file's stem
    as ``split``."""
    for path in paths:
        for line in path.read_text().splitlines():
            if line.strip():
                yield {**json.loads(line), "split": path.stem}


def natural_rows(paths: list[Path]) -> list[dict[str, Any]]:
    """The labelled natural requests of ``paths``: rows with a ``description`` and a
    ``domain`` field (``null`` for none). The hard negatives of ``resolution_hard.jsonl`` have
    no domain label, so they are not read: their "no domain" would be a guess."""
    return [row for row in _jsonl(paths) if "description" in row and "domain" in row]


# How a definitions row's phrases become one request: varied, so no one wording is learnt.
JOINS = ("I need to tell apart {}.", "classes: {}", "{}", "Sort pictures into these groups: {}.",
         "can you recognise {}?", "A classifier for {} please.")


def definition_rows(paths: list[Path]) -> list[dict[str, Any]]:
    """The definitions rows of ``paths`` (a ``classes`` list of phrases that do not name their
    class, and ``expect``) written as one request each, for training: the phrases joined by
    commas and a final "and", in one of :data:`JOINS` picked by the row's id. Why: they teach
    the reader how people describe a class without its name ("the animal that says moo"),
    which natural requests do too."""
    import zlib

    rows = []
    for row in _jsonl(paths):
        if row.get("kind") != "definitions" or not row.get("classes") or "domain" not in row:
            continue
        phrases = [str(c).strip().rstrip(".") for c in row["classes"]]
        listed = phrases[0] if len(phrases) == 1 else \
            ", ".join(phrases[:-1]) + " and " + phrases[-1]  # fmt: skip
        join = JOINS[zlib.crc32(str(row.get("id")).encode()) % len(JOINS)]
        rows.append({**row, "description": join.format(listed)})
    return rows


def targets(rows: list[dict], classes: list[str], domains: list[str]
            ) -> tuple[torch.Tensor, torch.Tensor]:
    """(asked-for matrix, domain index with 0 for none) of ``rows``; an unknown class or
    domain in a row is an error, not a silent zero."""
    index = {c: k for k, c in enumerate(classes)}
    y = torch.zeros(len(rows), len(classes))
    for i, row in enumerate(rows):
        for name in row.get("expect") or []:
            if name not in index:
                raise ValueError(f"row {row.get('id')}: {name!r} is not a catalogue class")
            y[i, index[name]] = 1.0
    if bad := {r.get("domain") for r in rows} - {None, *domains}:
        raise ValueError(f"domains {sorted(bad, key=str)} are not the catalogue's {domains}")
    d = torch.tensor([0 if r.get("domain") is None else 1 + domains.index(r["domain"])
                      for r in rows])  # fmt: skip
    return y, d


def outcomes(reader: RequestReader, rows: list[dict]) -> dict[str, int]:
    """The reader alone on ``rows``, answering whenever it reads two or more classes: how many
    it reads right (the classes and domain, or, for a row to ask back, fewer than two
    classes), answers wrongly, or asks back when it should answer."""
    counts = {"right": 0, "wrong": 0, "asked": 0}
    for i in range(0, len(rows), 64):
        part = rows[i : i + 64]
        pc, pd = reader.probabilities([r["description"] for r in part])
        for row, c, d in zip(part, pc, pd, strict=True):
            chosen, domain, _ = reading(c, d, reader.domains)
            if len(chosen) < 2:
                counts["right" if row.get("expect") is None else "asked"] += 1
                continue
            names = sorted(reader.classes[k] for k in chosen)
            ok = row.get("expect") is not None and names == sorted(row["expect"]) and \
                domain == row.get("domain")  # fmt: skip
            counts["right" if ok else "wrong"] += 1
    return counts


def exact(reader: RequestReader, rows: list[dict]) -> float:
    """Share of ``rows`` the reader alone reads right (:func:`outcomes`)."""
    return outcomes(reader, rows)["right"] / len(rows) if rows else float("nan")


def _encoder(base: str | None) -> tuple[torch.nn.Module, Any]:
    """The pretrained encoder and tokenizer in ``base`` (a local sentence-transformers or
    Hugging Face folder; ``None``: the bundled MiniLM)."""
    from transformers import AutoTokenizer, BertModel

    from model_store.text import bundled_model_path

    path = base or bundled_model_path()
    encoder = BertModel.from_pretrained(path, add_pooling_layer=False, local_files_only=True)
    return encoder, AutoTokenizer.from_pretrained(path, local_files_only=True)


def fit(rows: list[dict], classes: list[str], domains: list[str], args: argparse.Namespace,
        val: list[dict] | None = None) -> tuple[RequestReader, list[dict]]:
    """Fine-tune on ``rows``; returns the reader and one log entry per epoch."""
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    encoder, tokenizer = _encoder(args.base)
    model = RequestModel(encoder, classes, domains, args.head)
    reader = RequestReader(model, tokenizer, args.max_length, pick_device(args.device))
    heads = [p for name, p in model.named_parameters() if not name.startswith("encoder.")]
    opt = torch.optim.AdamW([{"params": model.encoder.parameters(), "lr": args.lr},
                             {"params": heads, "lr": args.head_lr}], weight_decay=0.01)
    steps = args.epochs * math.ceil(len(rows) / args.batch_size)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, s / max(1.0, 0.06 * steps)) * max(0.0, (steps - s) / steps))
    log, order = [], list(range(len(rows)))
    y, d = targets(rows, classes, domains)
    for epoch in range(1, args.epochs + 1):
        model.train()
        rng.shuffle(order)
        total, t0 = 0.0, time.perf_counter()
        for i in tqdm(range(0, len(order), args.batch_size), desc=f"epoch {epoch}", leave=False):
            idx = order[i : i + args.batch_size]
            c, dl = model(**reader.batch([rows[j]["description"] for j in idx]))
            loss = _loss(c, dl, y[idx].to(c.device), d[idx].to(c.device))
            if not torch.isfinite(loss):
                raise FloatingPointError(f"epoch {epoch}: the loss is {loss.item()}; lower --lr")
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step(), sched.step(), opt.zero_grad()
            total += loss.item() * len(idx)
        model.eval()
        entry = {"epoch": epoch, "loss": total / len(rows), "seconds": time.perf_counter() - t0}
        if val:
            entry["val_exact"] = exact(reader, val)
        log.append(entry)
        print(json.dumps(entry), flush=True)
    return reader, log


def _loss(c: torch.Tensor, d: torch.Tensor, y: torch.Tensor, yd: torch.Tensor) -> torch.Tensor:
    """Binary cross-entropy per class, summed over a quarter of the classes' count (so a
    30-class catalogue weighs its classes about 7× the domain), plus the domain's."""
    scale = c.shape[1] / 4
    return torch.nn.functional.binary_cross_entropy_with_logits(c, y) * scale + \
        torch.nn.functional.cross_entropy(d, yd)  # fmt: skip


def _parser() -> argparse.ArgumentParser:
    """The command's options (the defaults are the recipe chosen at stop 57, the head chosen
    at stop 58, and the counterfactual shares, set before training and kept at stop 59)."""
    p = argparse.ArgumentParser(prog="tailor train request-reader", description=__doc__.split(
        "\n")[0])
    p.add_argument("--data", type=Path, nargs="+", default=None,
                   help="jsonl files of labelled requests (default: benchmarks/data/"
                        "resolution_*.jsonl less --val and --hold-out)")
    p.add_argument("--val", type=Path, nargs="*", default=[],
                   help="jsonl files scored after each epoch, never trained on")
    p.add_argument("--hold-out", type=Path, nargs="*", default=[],
                   help="jsonl files neither trained on nor scored (kept for a later test)")
    p.add_argument("--catalogue", type=Path, default=None,
                   help="a catalogue.json (classes, domains); default Tailor-PACS")
    p.add_argument("--base", default=None, help="a local encoder folder (default: MiniLM)")
    p.add_argument("--out", type=Path, default=Path(".tailor/request-reader"))
    p.add_argument("--head", choices=HEADS, default="label-attention",
                   help="label-wise attention per class beside mean pooling (chosen on sets "
                        "90-93 at stop 58), or mean pooling only (stop 57)")
    p.add_argument("--definitions", action="store_true",
                   help="also train on the definitions rows, each written as one request")
    p.add_argument("--counterfactuals", type=float, default=0.3,
                   help="share of the answerable requests also trained on with a clause that "
                        "rules out a class (trainer.reader.augment)")
    p.add_argument("--foreign", type=float, default=0.15,
                   help="share of the answerable requests also trained on asking for something "
                        "Tailor-PACS lacks, labelled ask back (trainer.reader.augment; not "
                        "with --catalogue)")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--head-lr", type=float, default=1e-3)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default=None, help="cpu, cuda, … (default: the best there is)")
    return p


def _catalogue(path: Path | None) -> tuple[list[dict], list[str]]:
    """(classes, each a dict with at least ``name``, and domains) of a ``catalogue.json``, or
    of Tailor-PACS."""
    if path is None:
        from trainer.data.catalogue import catalogue_json

        catalogue = catalogue_json()
    else:
        catalogue = json.loads(path.read_text())
    entries = [c if isinstance(c, dict) else {"name": c} for c in catalogue["classes"]]
    return entries, list(catalogue["domains"])


def training_files(data: list[Path] | None, held: list[Path]) -> list[Path]:
    """``data``, or every ``benchmarks/data/resolution_*.jsonl`` less ``held``; ``data`` that
    names a held file is an error (a test set would be trained on)."""
    out = {p.resolve() for p in held}
    paths = data or [p for p in sorted(DATA.glob("resolution_*.jsonl")) if p.resolve() not in out]
    if overlap := {p.resolve() for p in paths} & out:
        raise SystemExit(f"--data holds files kept out of training: {sorted(map(str, overlap))}")
    return paths


def reader_main(argv: list[str] | None = None) -> dict:
    """Train, save and return the training summary."""
    args = _parser().parse_args(argv)
    entries, domains = _catalogue(args.catalogue)
    classes = [c["name"] for c in entries]
    paths = training_files(args.data, [*args.val, *args.hold_out])
    rows, val = natural_rows(paths), natural_rows(list(args.val))
    if args.definitions:
        rows += definition_rows(paths)
    if not rows:
        raise SystemExit("no natural requests in --data")
    if not (0 <= args.counterfactuals <= 1 and 0 <= args.foreign <= 1):
        raise SystemExit("--counterfactuals and --foreign are shares, from 0 to 1")
    made = counterfactuals(rows, entries, args.counterfactuals, args.seed)
    # the foreign things are Tailor-PACS's: another catalogue may hold them
    made += foreign(rows, entries, args.foreign, args.seed) if args.catalogue is None else []
    labelled, rows = len(rows), rows + made
    reader, log = fit(rows, classes, domains, args, val)
    summary = {"rows": len(rows), "labelled": labelled, "files": [p.name for p in paths],
               "epochs": log,
               "seed": args.seed, "recipe": {k: getattr(args, k) for k in (
                   "epochs", "lr", "head_lr", "batch_size", "max_length", "head", "definitions",
                   "counterfactuals", "foreign")}}
    save_reader(reader.model, reader.tokenizer, args.out, args.max_length,
                {"trained_on": f"{labelled} requests of {len(paths)} files, and {len(made)} "
                               f"counterfactual copies",
                 "files": [p.name for p in paths]})
    (args.out / "train.json").write_text(json.dumps(summary, indent=1))
    print(f"request reader: {args.out} ({len(rows)} requests, {len(log)} epochs)")
    return summary


if __name__ == "__main__":
    reader_main()

