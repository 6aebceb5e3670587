"""TAPER training and evaluation (paper: ../shared/papers/taper.txt; DESIGN.md §5, §5b).

Entry point: ``trainer.taper.train.main(argv)`` (``tailor train taper``).
"""

from trainer.taper.train import main

__all__ = ["main"]
