"""Typer glue for ``tailor train taper``: every option is forwarded to ``trainer.taper.main``.

``trainer/cli.py`` owns the ``train`` sub-app and calls ``register(train_app)``; keeping the
argument parsing in ``trainer.taper.train`` (argparse) means tests and benchmarks call
``main(argv)`` directly with exactly what a user types.
"""

from __future__ import annotations

import typer

HELP = ("Train TAPER (3 stages) + baselines + controls, score on fixed test tasks, write the "
        "artifact. Options: --config tiny|demo|default, --seeds, --jobs, --ablations, "
        "--set KEY=VALUE, --out, --data-dir, --store-dir (see `--help`).")


def register(train_app: typer.Typer) -> None:
    """Add the ``taper`` command to the ``train`` sub-app."""

    @train_app.command(
        "taper", help=HELP, add_help_option=False,
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )
    def taper(ctx: typer.Context) -> None:
        from trainer.taper.train import main

        main(list(ctx.args))
