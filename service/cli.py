"""Service commands for the ``tailor`` console script (mounted by ``tailor/cli.py``).

``serve`` runs uvicorn; ``migrate`` runs ``alembic upgrade head``; ``keys create`` writes a
client key straight into the registry (the admin HTTP route does the same remotely).
The commands that call a running server (``personalize``, ``predict``, ``download``) live in
:mod:`tailor.appcli`: they need only the HTTP client, not the service.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

app = typer.Typer(help="Personalization service.", no_args_is_help=True)
keys_app = typer.Typer(help="API keys.", no_args_is_help=True)
app.add_typer(keys_app, name="keys")


@app.command()
def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    workers: int = 1,
    print_examples: Annotated[bool, typer.Option(help="print curl examples first")] = False,
) -> None:
    """Run the API under uvicorn (settings from TAILOR_* environment variables).

    With ``--workers N`` each worker is a separate process running its own lifespan (artifact,
    encoder, caches); they share one listening socket, and uvicorn replaces a worker that dies.
    """
    import logging

    import uvicorn

    from service.core.settings import Settings

    try:
        _preflight(Settings())
    except Exception as exc:  # noqa: BLE001 - any of these means the workers could never start
        typer.echo(f"tailor serve: refusing to start: {exc}", err=True)
        raise typer.Exit(1) from None
    if print_examples:
        _print_examples(f"http://{host}:{port}")
    _metrics_across_workers(workers)
    failed = _WorkerStartFailure()
    logging.getLogger("uvicorn.error").addFilter(failed)
    uvicorn.run("service.main:create_app", factory=True, host=host, port=port, workers=workers,
                http="service.api.protocol:HeaderDeadlineProtocol")  # request-header deadline
    if failed.seen:  # uvicorn's supervisor exits 0 when a worker's lifespan fails: we do not
        raise typer.Exit(3)


def _metrics_across_workers(workers: int) -> None:
    """With N > 1 workers, give them one fresh prometheus multiprocess directory (inherited
    through the environment by every spawned worker), so /metrics reports all of them.

    An operator's own ``PROMETHEUS_MULTIPROC_DIR`` is kept, its metric files (``*.db``) of a
    previous run removed (they would be added to this one's totals); a directory holding
    anything else is refused rather than touched.
    """
    import os
    import tempfile
    from pathlib import Path

    chosen = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if workers <= 1 and not chosen:
        return
    if chosen:
        folder = Path(chosen)
        folder.mkdir(parents=True, exist_ok=True)
        others = [p.name for p in folder.iterdir() if p.suffix != ".db"]
        if others:
            raise typer.BadParameter(f"PROMETHEUS_MULTIPROC_DIR={chosen} holds other files "
                                     f"({', '.join(others[:3])}); give the metrics their own "
                                     "directory")  # fmt: skip
        for stale in folder.glob("*.db"):
            stale.unlink()
    else:
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="tailor-metrics-")


def _preflight(settings) -> None:
    """Check, once and before any worker exists, what would make every worker's lifespan fail.

    Migrating here (rather than in N lifespans at once) also keeps workers from racing on DDL;
    the artifact check hashes every file and its error names the one that was modified.
    """
    from model_store.artifacts import open_artifact
    from service.core import db

    db.prepare_database(settings.database_url, migrate=settings.migrate_on_start).dispose()
    open_artifact(settings.store_dir, "taper", settings.artifact_version)


class _WorkerStartFailure:
    """A logging filter that notices uvicorn's "child failed to start" message (and passes it)."""

    seen = False

    def filter(self, record) -> bool:
        if "failed to start" in record.getMessage():
            self.seen = True
        return True


@app.command()
def migrate() -> None:
    """Bring the SQL registry to the newest schema (alembic upgrade head)."""
    from service.core import db
    from service.core.settings import Settings

    url = Settings().database_url
    db.upgrade(url)
    typer.echo(f"schema at {db.head_revision(url)} ({url.split('@')[-1]})")


@keys_app.command("create")
def keys_create(
    name: Annotated[str, typer.Option(help="name of a new client")] = "client",
    client_id: Annotated[str | None, typer.Option(help="add a key to this client")] = None,
) -> None:
    """Create a client key in the registry and print it (shown only once)."""
    from sqlalchemy.orm import Session

    from service.core import crud, db
    from service.core.settings import Settings

    engine = db.prepare_database(Settings().database_url, migrate=True)
    with Session(engine, expire_on_commit=False) as s, s.begin():
        client = crud.get_client(s, client_id=client_id) if client_id else None
        if client_id and client is None:
            raise typer.BadParameter(f"no client {client_id!r}", param_hint="--client-id")
        client = client or crud.create_client(s, name=name)
        row, plaintext = crud.create_api_key(s, client_id=client.id)
    engine.dispose()
    typer.echo(json.dumps({"client_id": client.id, "key_id": row.key_id, "key": plaintext}))


@keys_app.command("revoke")
def keys_revoke(
    key_id: Annotated[str, typer.Argument(help="the key's public id (key_id)")],
) -> None:
    """Revoke a client key; it is refused from the next request on (keys are checked per call)."""
    from sqlalchemy.orm import Session

    from service.core import crud, db
    from service.core.settings import Settings

    engine = db.prepare_database(Settings().database_url, migrate=True)
    with Session(engine) as s, s.begin():
        found = crud.revoke_api_key(s, key_id=key_id)
    engine.dispose()
    if not found:
        typer.echo(f"no active key with id {key_id!r}", err=True)
        raise typer.Exit(1)
    typer.echo(json.dumps({"key_id": key_id, "revoked": True}))


def _print_examples(base: str) -> None:
    auth = '-H "Authorization: Bearer $TAILOR_API_KEY"'
    lines = [
        f"Tailor API on {base}  (OpenAPI docs: {base}/docs)",
        "  export TAILOR_API_KEY=$(tailor keys create --name demo | "
        "python -c 'import json,sys; print(json.load(sys.stdin)[\"key\"])')",
        f"  curl -s {auth} -H 'content-type: application/json' \\",
        f'       -d \'{{"description": "classify cats, dogs and horses"}}\' {base}/v1/personalize',
        f"  curl -s {auth} -o model.safetensors {base}/v1/models/<id>/weights",
        f"  curl -s {auth} -F files=@image.png {base}/v1/models/<id>/predict",
        f"  curl -s {base}/readyz; curl -s {base}/metrics | head",
    ]
    typer.echo("\n".join(lines))
