"""`tailor data ...` (and later `tailor train ...`): the trainer's command-line entry points.

The lead's `tailor/cli.py` mounts `app`; each area owns one sub-app here.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

app = typer.Typer(help="Offline data preparation and training.", no_args_is_help=True)
data_app = typer.Typer(help="Build and inspect Tailor-PACS.", no_args_is_help=True)
train_app = typer.Typer(help="Training commands (TAPER, federated).", no_args_is_help=True)
app.add_typer(data_app, name="data")
app.add_typer(train_app, name="train")

SizeOpt = Annotated[str, typer.Option(
    "--size", help="default (800/class, 30 classes), tiny, or large (~110k images)")]
DirOpt = Annotated[Path | None, typer.Option("--data-dir", help="cache dir; $TAILOR_DATA_DIR")]
SeedOpt = Annotated[int, typer.Option("--seed", help="build seed")]


def _build(size: str, data_dir: Path | None, seed: int):
    from trainer.data.pacs import build_pacs
    from trainer.data.sources import SourceMissingError

    try:
        return build_pacs(data_dir, size=size, seed=seed)
    except (SourceMissingError, ValueError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from err


@data_app.command("build")
def build(size: SizeOpt = "default", data_dir: DirOpt = None, seed: SeedOpt = 0) -> None:
    """Build (or load from cache) Tailor-PACS and print its shape and fingerprint."""
    start = time.perf_counter()
    data = _build(size, data_dir, seed)
    counts = np.bincount(data.split, minlength=3)
    typer.echo(f"Tailor-PACS {size}: {len(data)} images, {len(data.class_names)} classes, "
               f"train/val/test {counts[0]}/{counts[1]}/{counts[2]}, "
               f"fingerprint {data.fingerprint[:16]} ({time.perf_counter() - start:.1f} s)")


@data_app.command("export-sources")
def export_sources_cmd(out: Annotated[Path, typer.Argument(help="bundle path (.npz)")]) -> None:
    """Bundle the installed raw sources for a machine without them (TAILOR_SOURCES=OUT there)."""
    from trainer.data.sources import export_sources

    counts = export_sources(out)
    typer.echo(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB): "
               + ", ".join(f"{k} {v}" for k, v in counts.items()))


@data_app.command("preview")
def preview_cmd(out: Annotated[Path, typer.Option("--out", help="PNG path")] = Path(
                    ".tailor/tailor-pacs-preview.png"),
                size: SizeOpt = "default", data_dir: DirOpt = None, seed: SeedOpt = 0) -> None:
    """Write a PNG grid of the dataset: rows = classes, columns = domains."""
    from trainer.data.preview import preview

    path = preview(_build(size, data_dir, seed), out)
    typer.echo(f"wrote {path}")


# `tailor train taper ...` -> trainer.taper.train.main(argv) (owned by the TAPER trainer).
from trainer.taper.cli import register as _register_taper  # noqa: E402

_register_taper(train_app)

_PASSTHROUGH = {"add_help_option": False,
                "context_settings": {"allow_extra_args": True, "ignore_unknown_options": True}}


@train_app.command("foundation", **_PASSTHROUGH)
def foundation(ctx: typer.Context) -> None:
    """Train the offline default CLIP foundation on public data (`--help` for options)."""
    from trainer.federated.cli import foundation_main

    foundation_main(list(ctx.args))


@train_app.command("federated", **_PASSTHROUGH)
def federated(ctx: typer.Context) -> None:
    """Run the federated FedCLIP benchmark on Flower and save the adapters (see `--help`)."""
    from trainer.federated.cli import federated_main

    federated_main(list(ctx.args))


@train_app.command("anytime", **_PASSTHROUGH)
def anytime(ctx: typer.Context) -> None:
    """Run the anytime federated benchmark (Accumulator + baselines, ViT; see `--help`)."""
    from trainer.anytime.cli import anytime_main

    anytime_main(list(ctx.args))


@train_app.command("perfix", **_PASSTHROUGH)
def perfix(ctx: typer.Context) -> None:
    """Run the FedPerfix benchmark (prefix personalization + baselines, ViT; see `--help`)."""
    from trainer.perfix.cli import perfix_main

    perfix_main(list(ctx.args))


@train_app.command("request-reader", **_PASSTHROUGH)
def request_reader(ctx: typer.Context) -> None:
    """Fine-tune the text encoder to read task descriptions (see `--help`)."""
    from trainer.reader.train import reader_main

    reader_main(list(ctx.args))


@train_app.command("phrase-reader", **_PASSTHROUGH)
def phrase_reader(ctx: typer.Context) -> None:
    """Fit the linear reader of class-list definitions (see `--help`; about a minute)."""
    from trainer.reader.phrases import phrases_main

    phrases_main(list(ctx.args))


@train_app.command("federated-prepare", **_PASSTHROUGH)
def federated_prepare(ctx: typer.Context) -> None:
    """Write per-machine folders for a Flower SuperLink/SuperNode deployment (see `--help`)."""
    from trainer.federated.deploy import prepare_main

    prepare_main(list(ctx.args))


@train_app.command("federated-register", **_PASSTHROUGH)
def federated_register(ctx: typer.Context) -> None:
    """Save a deployed FedCLIP run's adapters as the `fedclip` artifact (see `--help`)."""
    from trainer.federated.deploy import register_main

    register_main(list(ctx.args))
