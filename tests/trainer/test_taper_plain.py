"""Issue 14 §6: plain source scans, as a training augmentation and as an evaluation view."""

from __future__ import annotations

import numpy as np
import torch

from trainer.data import sources
from trainer.data.render import plain
from trainer.taper.config import get_config
from trainer.taper.data import TRAIN, Split, make_split, normalise, shift_augment
from trainer.taper.inputs import plain_images, with_plain


def test_plain_scan_keeps_the_source_and_inverts_to_ink_on_paper():
    digit = sources.load_source("mnist")[0][0]
    white, ink = plain(digit), plain(digit, invert=True)
    assert white.shape == ink.shape == (32, 32, 3) and white.dtype == np.uint8
    assert (white[..., 0] == white[..., 1]).all()  # grayscale, no domain colouring
    assert white.mean() < 80 < 180 < ink.mean()  # white strokes on black / dark ink on white
    assert np.abs((255 - white).astype(int) - ink).max() <= 1  # up to resize rounding


def test_images_by_id_inverts_source_ids(tiny_pacs):
    ids = np.asarray(tiny_pacs.source_ids[:40])
    raw = sources.images_by_id(ids)
    for i in (0, 17, 39):
        name = next(n for n, c in sources.SOURCE_CODES.items()
                    if c == ids[i] // sources.SOURCE_ID_BASE)
        np.testing.assert_array_equal(raw[i], sources.load_source(name)[0][ids[i] % 1_000_000])


def test_plain_prob_swaps_augmented_images_for_either_polarity(tiny_pacs):
    cfg = get_config("tiny", plain_prob=1.0)
    train = with_plain(make_split(tiny_pacs, TRAIN), tiny_pacs, cfg)
    assert train.plain.shape == train.x.shape
    idx = torch.arange(64)
    got = train.batch(idx, torch.Generator().manual_seed(0))
    # the draws in order: which images, which polarity, then the shifts (pinned: reproducible)
    gen = torch.Generator().manual_seed(0)
    assert bool((torch.rand(64, generator=gen) < 1.0).all())
    invert = torch.rand(64, generator=gen) < 0.5
    chosen = torch.where(invert[:, None, None, None], 255 - train.plain[idx], train.plain[idx])
    torch.testing.assert_close(got, shift_augment(normalise(chosen), gen))
    assert 0 < int(invert.sum()) < 64  # both polarities drawn
    # without a generator (scoring), or with plain_prob 0, the rendered images are untouched
    torch.testing.assert_close(train.batch(idx), normalise(train.x[idx]))
    off = Split(train.x, train.y, train.d, train.plain, 0.0)
    gen_a, gen_b = torch.Generator().manual_seed(1), torch.Generator().manual_seed(1)
    bare = Split(train.x, train.y, train.d)
    torch.testing.assert_close(off.batch(idx, gen_a), bare.batch(idx, gen_b))


def test_plain_images_follow_the_run_resolution(tiny_pacs):
    x = plain_images(tiny_pacs, TRAIN, 48, invert=True)
    assert x.shape[1:] == (3, 48, 48) and x.dtype == torch.uint8
