"""Offline text encoder (bundled MiniLM and a local folder), task embedding, image preprocessing."""

from __future__ import annotations

import os
import socket

import numpy as np
import pytest
import torch
from PIL import Image

from model_store.images import IMAGE_SIZE, MEAN, STD, normalize_batch, to_batch, to_tensor
from model_store.text import TextEncoder, task_embedding


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a network connection fails the test loudly."""
    attempts = []

    def refuse(self, address, *args, **kwargs):
        attempts.append(address)
        raise AssertionError(f"network access attempted: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: refuse(None, a))
    return attempts


def test_bundled_encoder_loads_and_encodes_offline(no_network):
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"
    enc = TextEncoder(device="cpu")  # loaded under the network ban
    emb = enc.encode(["a photo of a cat", "a cat", "the handwritten digit zero"])
    assert enc.dim == 384 and emb.shape == (3, 384) and emb.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, rtol=1e-5)
    assert emb[0] @ emb[1] > emb[0] @ emb[2] + 0.2  # real semantics, not random vectors
    assert no_network == []
    with pytest.raises(AssertionError, match="network access"):  # the trap itself works
        socket.socket().connect(("127.0.0.1", 9))


def test_local_sentence_transformers_folder(tmp_path, text_encoder, no_network):
    folder = tmp_path / "my-encoder"
    text_encoder.model.save(str(folder))
    local = TextEncoder(folder, device="cpu")
    texts = ["a sketch of a horse", "trousers"]
    np.testing.assert_allclose(local.encode(texts), text_encoder.encode(texts), atol=1e-5)
    assert local.path == str(folder)


def test_encoder_input_errors(tmp_path, text_encoder):
    with pytest.raises(FileNotFoundError, match="sentence-transformers"):
        TextEncoder(tmp_path / "missing")
    with pytest.raises(ValueError, match="list of strings"):
        text_encoder.encode("a cat")
    with pytest.raises(ValueError, match="list of strings"):
        text_encoder.encode(["a cat", 3])
    assert text_encoder.encode([]).shape == (0, 384)


def test_word_vectors_read_each_word_in_its_context(text_encoder):
    """One vector per word, its first word piece's last hidden state (checked against the
    transformer run here); the same word at the same place differs by what surrounds it; words
    past the length limit get zeros."""
    words = ["photograhs", "of", "cats", "not", "dogs"]  # "photograhs": several word pieces
    got = text_encoder.word_vectors(words)
    pieces = text_encoder.model.tokenizer(" ".join(words), return_tensors="pt")
    with torch.no_grad():
        hidden = text_encoder.model[0].auto_model(**pieces).last_hidden_state[0].numpy()
    first = [pieces.word_ids().index(i) for i in range(len(words))]
    assert got.shape == (5, 384) and got.dtype == np.float32 and first[1] > 2
    np.testing.assert_allclose(got, hidden[first], atol=1e-5)
    asked = text_encoder.word_vectors(["dogs", "and", "cats"])
    refused = text_encoder.word_vectors(["dogs", "not", "cats"])
    assert not np.allclose(asked[2], refused[2], atol=1e-2)
    long = text_encoder.word_vectors(["cat"] * 600)
    assert long[:100].any(axis=1).all() and not long[-1].any()
    assert text_encoder.word_vectors([]).shape == (0, 384)


def test_task_embedding_is_renormalised_mean_of_normalised_prompts():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 8)), rng.normal(size=(3, 8))
    unit = lambda x: x / np.linalg.norm(x, axis=-1, keepdims=True)  # noqa: E731
    expected = unit((unit(a).mean(0) + unit(b).mean(0)) / 2)
    got = task_embedding([a, b])
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    np.testing.assert_allclose(task_embedding([a[0]]), unit(a[0]), rtol=1e-5)
    weighted = task_embedding([a, b], weights=[0.0, 2.0])
    np.testing.assert_allclose(weighted, unit(unit(b).mean(0)), rtol=1e-5)


@pytest.mark.parametrize(
    "args, match",
    [
        (([],), "at least one"),
        (([np.zeros(4)],), "all-zero"),
        (([np.ones(4), np.ones(5)],), "different dimensions"),
        (([np.ones(4)], [-1.0]), "non-negative"),
        (([np.ones(4)], [1.0, 2.0]), "non-negative"),
    ],
)
def test_task_embedding_errors(args, match):
    with pytest.raises(ValueError, match=match):
        task_embedding(*args)


def test_uint8_array_is_normalised_channel_first():
    img = np.random.default_rng(0).integers(0, 256, (IMAGE_SIZE, IMAGE_SIZE, 3), dtype=np.uint8)
    x = to_tensor(img)
    assert x.shape == (3, IMAGE_SIZE, IMAGE_SIZE) and x.dtype == torch.float32
    expected = (img[5, 7, 2] / 255.0 - MEAN[2]) / STD[2]
    assert x[2, 5, 7].item() == pytest.approx(expected, rel=1e-5)
    torch.testing.assert_close(normalize_batch(img[None])[0], x)


def test_pil_inputs_are_fitted_and_converted_to_rgb():
    """Non-square: shorter side to 32 (48 -> 32, 64 -> 42), then the centre 32x32 crop."""
    arr = np.random.default_rng(1).integers(0, 256, (64, 48, 3), dtype=np.uint8)
    resized = to_tensor(Image.fromarray(arr))
    manual = np.asarray(Image.fromarray(arr).resize((32, 42), Image.Resampling.BILINEAR))[5:37]
    torch.testing.assert_close(resized, to_tensor(np.ascontiguousarray(manual)))
    gray = to_tensor(Image.fromarray(arr[:, :, 0]))
    assert gray.shape == (3, 32, 32)
    torch.testing.assert_close(gray[0] * STD[0] + MEAN[0], gray[1] * STD[1] + MEAN[1])
    rgba = Image.fromarray(np.dstack([arr, np.full(arr.shape[:2], 255, np.uint8)]))
    torch.testing.assert_close(to_tensor(rgba), resized)
    batch = to_batch([arr, Image.fromarray(arr), arr[:32, :32]])
    assert batch.shape == (3, 3, 32, 32)
    torch.testing.assert_close(batch[0], batch[1])


@pytest.mark.parametrize(
    "bad, err",
    [
        (np.zeros((32, 32, 3), np.float32), ValueError),
        (np.zeros((32, 32, 2), np.uint8), ValueError),
        (np.zeros((2, 32, 32, 3), np.uint8), ValueError),
        ([[0, 1]], TypeError),
    ],
)
def test_image_errors(bad, err):
    with pytest.raises(err):
        to_tensor(bad)
    with pytest.raises(ValueError):
        to_batch([])


@pytest.mark.parametrize("shape", [(32, 32), (48, 48), (40, 75), (90, 33), (31, 200), (20, 20)])
@pytest.mark.parametrize("size", [32, 48])
def test_fit_square_is_torchvision_resize_then_centre_crop(shape, size):
    """The one preprocessing equals the documented stock-torchvision pipeline, pixel for pixel
    (so an app using torchvision gets the service's logits)."""
    from PIL import Image
    from torchvision import transforms as T

    from model_store.images import fit_square

    rng = np.random.default_rng(sum(shape) + size)
    img = Image.fromarray(rng.integers(0, 256, (*shape, 3), dtype=np.uint8))
    ref = T.CenterCrop(size)(T.Resize(size, interpolation=T.InterpolationMode.BILINEAR)(img))
    ours = fit_square(img, size)
    assert ours.size == (size, size)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(ref))
