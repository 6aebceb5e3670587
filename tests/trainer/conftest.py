"""Session-scoped Tailor-PACS fixtures: the tiny build is rendered once and shared."""

from __future__ import annotations

import pytest

from trainer.data.pacs import build_pacs


@pytest.fixture(scope="session")
def tiny_data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("tailor-data")


@pytest.fixture(scope="session")
def tiny_pacs(tiny_data_dir):
    """The tiny Tailor-PACS (digits + animals, 32 per class), built into a temp data dir."""
    return build_pacs(tiny_data_dir, size="tiny", seed=0)
