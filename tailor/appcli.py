"""Commands that call a running Tailor server over HTTP (personalize, predict, download).

They use only :mod:`tailor.client`, so they work on a machine with neither the service nor the
trainer installed; ``tailor/cli.py`` mounts them next to the trainer and service commands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import httpx
import typer

app = typer.Typer(help="Call a running Tailor server.", no_args_is_help=True)
UrlOpt = Annotated[str | None, typer.Option(help="server URL (default $TAILOR_URL)")]
KeyOpt = Annotated[str | None, typer.Option(help="API key (default $TAILOR_API_KEY)")]


def _call(url: str | None, key: str | None, request) -> None:
    """Run ``request(client)`` and print its JSON; a problem or an unreachable server exits 1."""
    from tailor.client import TailorClient, TailorError

    with TailorClient(url, key) as client:
        try:
            result = request(client)
        except TailorError as exc:
            typer.echo(json.dumps(exc.problem, indent=2), err=True)
            raise typer.Exit(1) from None
        except httpx.TransportError as exc:  # still failing after the client's retries
            typer.echo(f"cannot reach {client.http.base_url}: {exc}", err=True)
            raise typer.Exit(1) from None
    typer.echo(json.dumps(result, indent=2))


@app.command()
def personalize(
    description: Annotated[str, typer.Argument(help='e.g. "classify cats and dogs"')],
    domain: str | None = None,
    method: str | None = None,
    url: UrlOpt = None,
    key: KeyOpt = None,
) -> None:
    """Ask a running server for a personalized model; prints its JSON."""
    _call(url, key, lambda c: c.personalize(description=description, domain=domain, method=method))


@app.command()
def predict(
    model_id: str,
    images: Annotated[list[Path], typer.Argument(exists=True, dir_okay=False)],
    top_k: int = 1,
    exit: Annotated[int | None, typer.Option(help="anytime models: stop at this exit")] = None,  # noqa: A002
    url: UrlOpt = None,
    key: KeyOpt = None,
) -> None:
    """Classify image files with a personalized model on a running server."""
    _call(url, key, lambda c: c.predict(model_id, list(images), top_k=top_k, exit=exit))


@app.command()
def download(
    model_id: str,
    out: Annotated[Path, typer.Option(help="directory for model.safetensors + config.json")],
    dtype: str = "fp32",
    url: UrlOpt = None,
    key: KeyOpt = None,
) -> None:
    """Save a model as ``OUT/model.safetensors`` and ``OUT/config.json`` (labels, preprocessing);
    prints the two paths."""
    _call(url, key, lambda c: {k: str(v) for k, v in c.download(model_id, out, dtype).items()})
