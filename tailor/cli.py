"""The `tailor` console script: the one place that composes trainer and service commands.

`trainer` and `service` must not import each other (they meet only through `model_store`), so the
command tree is assembled here, and each side is imported only when its commands are mounted.
"""

from __future__ import annotations

import typer

app = typer.Typer(help="Tailor: personalization as a service.", no_args_is_help=True)


def _mount() -> None:
    """Attach the trainer (data, train), service and HTTP (personalize, ...) commands."""
    from trainer.cli import app as trainer_app

    for group in trainer_app.registered_groups:
        app.add_typer(group.typer_instance, name=group.name)
    for command in trainer_app.registered_commands:
        app.registered_commands.append(command)
    from tailor.appcli import app as http_app

    app.registered_commands.extend(http_app.registered_commands)
    try:
        from service.cli import app as service_app
    except ImportError:  # the service package is optional for offline training machines
        return
    for group in service_app.registered_groups:
        app.add_typer(group.typer_instance, name=group.name)
    for command in service_app.registered_commands:
        app.registered_commands.append(command)


def main() -> None:
    """Entry point of the console script."""
    _mount()
    app()


if __name__ == "__main__":
    main()
