"""A fine-grained catalogue for the TAPER regime question: letters of three scripts in three
font styles, rendered from the fonts installed on this machine (issue 14 §5).

    .venv/bin/python benchmarks/glyph_catalogue.py [--out .tailor/glyphs] [--per-cell 80]

Tailor-PACS poses three groups of ten visually distinct classes, and on it TAPER never beat
classifier selection (docs/results-taper.md). The paper's regime is many similar classes per
group. This writes one such catalogue in ``tailor train taper --data`` form:
``<out>/images/<style>/<class>/*.png`` (styles ``sans``, ``serif``, ``mono`` are the domains)
and ``<out>/catalogue.json`` (name, definition, group per class; a description per style).

Groups are scripts: 26 Latin lowercase letters, 18 Greek and 23 Cyrillic ones (67 classes,
22 per group on average). Letters that look the same as one of another script (Greek omicron
and Latin o, Cyrillic а е о р с у х к п) are left out, so every class is decidable from pixels;
near look-alikes stay (Greek ι / Latin i, Cyrillic ш / щ), which is what makes it fine-grained.
Every image is the letter cut from a three-letter word of its script (the neighbours show at the
edges, as in a crop from text), with a fresh draw of font file (of its style), size, rotation,
shear, offset, ink and paper grey levels, blur and noise, seeded, so a rebuild is identical. A
first version without the neighbours and with milder noise was too easy to tell the methods
apart (classifier selection 99.6 % on 5-way tasks at width 16). This is synthetic data
standing in for an engineer's catalogue, and is labelled so wherever its figures are reported.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont
from tqdm import tqdm

FONT_DIRS = (Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/truetype/liberation"))
# A style (domain) is the font files whose names start with one of its prefixes.
STYLES = {
    "sans": ("DejaVuSans-", "DejaVuSans.ttf", "DejaVuSansCondensed", "LiberationSans-",
             "LiberationSansNarrow"),
    "serif": ("DejaVuSerif", "LiberationSerif"),
    "mono": ("DejaVuSansMono", "LiberationMono"),
}
STYLE_TEXT = {"sans": "letters typeset in a sans-serif typeface",
              "serif": "letters typeset in a serif typeface with small feet on the strokes",
              "mono": "letters typeset in a monospaced typewriter typeface"}
SCRIPTS = {
    "latin": "abcdefghijklmnopqrstuvwxyz",
    "greek": "αβγδεζηθιλμξπστφψω",
    "cyrillic": "бвгджзийлмнтфцчшщъыьэюя",
}
SIZE = 32


def letter_name(char: str) -> str:
    """'GREEK SMALL LETTER ALPHA' → 'alpha'; 'CYRILLIC SMALL LETTER ZHE' → 'zhe'."""
    words = unicodedata.name(char).lower().split()
    return " ".join(words[words.index("letter") + 1:])


def classes() -> list[dict]:
    """One entry per class: folder, character, script."""
    out = []
    for script, chars in SCRIPTS.items():
        for ch in chars:
            name = letter_name(ch)
            out.append({"folder": f"{script}_{name.replace(' ', '_')}", "char": ch,
                        "script": script, "name": f"{script} {name}"})
    return out


def fonts(style: str) -> list[Path]:
    """The installed upright font files of a style (mono's names are excluded from sans)."""
    files = sorted(p for d in FONT_DIRS if d.is_dir() for p in d.glob("*.ttf"))
    chosen = [p for p in files if p.name.startswith(STYLES[style])]
    # Upright files only (slant comes from the shear): italic Cyrillic т, и, д are shaped like
    # Latin m, u, g, which would make classes of different groups the same picture.
    chosen = [p for p in chosen if not re.search("Italic|Oblique", p.name)]
    if style == "sans":
        chosen = [p for p in chosen if "Mono" not in p.name]
    if not chosen:
        raise SystemExit(f"no {style} fonts under {', '.join(map(str, FONT_DIRS))}: "
                         "apt-get install fonts-dejavu-core fonts-liberation")
    return chosen


def render(char: str, neighbours: str, font_file: Path, rng: np.random.Generator) -> Image.Image:
    """One augmented 32×32 image of ``char`` cut from a three-letter word: the letter centred,
    its two neighbours (other letters of its script) partly in the frame, as in a crop from
    text; then sheared, rotated, shrunk and degraded."""
    canvas = 96
    font = ImageFont.truetype(str(font_file), int(rng.integers(64, 84)))
    img = Image.new("L", (canvas, canvas), 0)
    draw = ImageDraw.Draw(img)
    left, top, right, bottom = draw.textbbox((0, 0), char, font=font)
    start = draw.textlength(neighbours[0], font=font)  # where the letter begins in the word
    dx, dy = rng.integers(-6, 7, size=2)
    x = (canvas - (right - left)) / 2 - left - start + dx
    draw.text((x, (canvas - (bottom - top)) / 2 - top + dy), neighbours[0] + char + neighbours[1],
              fill=255, font=font)
    shear = rng.uniform(-0.25, 0.25)
    img = img.transform(img.size, Image.Transform.AFFINE, (1, shear, -shear * canvas / 2, 0, 1, 0),
                        resample=Image.Resampling.BILINEAR)
    img = img.rotate(rng.uniform(-15, 15), resample=Image.Resampling.BILINEAR)
    img = img.resize((SIZE, SIZE), Image.Resampling.LANCZOS)
    if rng.random() < 0.5:
        img = img.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.0)))
    paper = rng.uniform(0, 150)
    ink = rng.uniform(paper + 70, 255)  # light ink on darker paper, always legible
    arr = paper + (ink - paper) * (np.asarray(img, np.float32) / 255.0)
    arr += rng.normal(0, rng.uniform(0, 14), size=arr.shape)
    return Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8)).convert("RGB")


def catalogue(entries: list[dict]) -> dict:
    """The ``--catalogue`` file: names, definitions, groups and style descriptions."""
    return {
        "classes": {e["folder"]: {
            "name": e["name"], "group": e["script"],
            "definition": f"the lowercase {e['name'].split()[0].capitalize()} letter "
                          f"{' '.join(e['name'].split()[1:])} ({e['char']})",
            "aliases": [e["char"]]} for e in entries},
        "domains": STYLE_TEXT,
    }


def build(out: Path, per_cell: int, seed: int) -> int:
    """Write the tree and the catalogue file; the number of images."""
    entries = classes()
    rng = np.random.default_rng(seed)
    n = 0
    for style in tqdm(STYLES, desc="styles"):
        files = fonts(style)
        for e in entries:
            folder = out / "images" / style / e["folder"]
            folder.mkdir(parents=True, exist_ok=True)
            others = SCRIPTS[e["script"]].replace(e["char"], "")
            for i in range(per_cell):
                pair = "".join(rng.choice(list(others), size=2))
                image = render(e["char"], pair, files[rng.integers(len(files))], rng)
                image.save(folder / f"{i:04d}.png")
                n += 1
    text = json.dumps(catalogue(entries), indent=1, ensure_ascii=False)
    (out / "catalogue.json").write_text(text, encoding="utf-8")
    return n


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=".tailor/glyphs")
    p.add_argument("--per-cell", type=int, default=80, help="images per (style, class)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    n = build(Path(args.out), args.per_cell, args.seed)
    print(f"{n} images of {len(classes())} classes in {len(STYLES)} styles under {args.out}")
    return n


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
