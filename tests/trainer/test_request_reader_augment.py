"""trainer.reader.augment: counterfactual requests name a class and rule it out, with the label
that follows; the trainer adds them only when asked and records the share."""

from __future__ import annotations

import json
import re

import pytest

from trainer.reader.augment import (
    DROP,
    EXCLUDE,
    FOREIGN,
    _plural,
    counterfactuals,
    foreign,
    surface,
)
from trainer.reader.train import _parser, reader_main

CLASSES = [{"name": n, "group": "animal"} for n in ("cat", "dog", "horse", "sheep")] + \
    [{"name": n, "group": "digit"} for n in ("one", "two", "three")]  # fmt: skip
ROWS = [{"id": "a", "description": "cats, dogs and horses please", "domain": None,
         "expect": ["cat", "dog", "horse"]},
        {"id": "b", "description": "ones and twos", "domain": "photo", "expect": ["one", "two"]},
        {"id": "c", "description": "what is this", "domain": None, "expect": None},
        {"id": "d", "description": "just cats", "domain": None, "expect": ["cat"]}]


def _clause(row: dict, original: dict) -> str:
    assert row["description"].startswith(original["description"])
    return row["description"][len(original["description"]):].strip()


def _named(clause: str) -> set[str]:
    """The catalogue classes a clause names (name, plural or numeral)."""
    forms = {n: {n, _plural(n)} for n in (c["name"] for c in CLASSES)}
    forms["one"] |= {"1", "1s"}
    forms["two"] |= {"2", "2s"}
    forms["three"] |= {"3", "3s"}
    words = set(re.findall(r"[\w-]+", clause.lower()))
    return {n for n, f in forms.items() if f & words}


def test_each_counterfactual_rules_out_one_class_and_its_label_follows():
    by_id = {r["id"]: r for r in ROWS}
    made = counterfactuals(ROWS * 50, CLASSES, 1.0, seed=0)
    assert len(made) == 100  # every answerable row once; the refusal and the single class not
    kinds = set()
    for row in made:
        original = by_id[row["id"].removesuffix("+cf")]
        clause, asked = _clause(row, original), set(original["expect"])
        named = _named(clause)
        assert len(named) == 1, clause
        (c,) = named
        assert row["domain"] == original["domain"]
        if c in asked:  # a dropped member: the label loses it, and it had 3+ classes
            assert set(row["expect"]) == asked - {c} and len(asked) >= 3
            kinds.add("drop")
        else:  # an excluded extra of the same group: the label is unchanged
            assert row["expect"] == original["expect"]
            assert {x["group"] for x in CLASSES if x["name"] == c} == \
                {x["group"] for x in CLASSES if x["name"] in asked}  # fmt: skip
            kinds.add("exclude")
    assert kinds == {"drop", "exclude"}


def test_share_zero_adds_nothing_and_a_seed_repeats_itself():
    assert counterfactuals(ROWS * 10, CLASSES, 0.0, seed=0) == []
    assert counterfactuals(ROWS * 10, CLASSES, 0.5, seed=3) == \
        counterfactuals(ROWS * 10, CLASSES, 0.5, seed=3)  # fmt: skip
    few = counterfactuals(ROWS * 100, CLASSES, 0.25, seed=1)
    assert 20 < len(few) < 80  # about a quarter of the 200 answerable rows


def test_a_foreign_ask_is_of_the_requests_own_kind_and_is_labelled_ask_back():
    mixed = {"id": "m", "description": "cats and ones", "domain": None, "expect": ["cat", "one"]}
    made = foreign(ROWS * 20 + [mixed] * 20, CLASSES, 1.0, seed=0)
    assert len(made) == 40  # rows a and b; not the refusal, the single class or the mixed row
    for row in made:
        original = next(r for r in ROWS if r["id"] == row["id"].removesuffix("+foreign"))
        clause = _clause(row, original)
        kind = {"a": "animal", "b": "digit"}[original["id"]]
        assert row["expect"] is None and row["domain"] == original["domain"]
        assert any(x in clause for x in FOREIGN[kind]) and not _named(clause), clause
    assert foreign(ROWS * 20, CLASSES, 0.0, seed=0) == []


def test_rows_naming_a_class_outside_the_catalogue_are_left_alone():
    row = {"id": "x", "description": "llamas and cats", "domain": None,
           "expect": ["llama", "cat"]}
    assert counterfactuals([row] * 20, CLASSES, 1.0, seed=0) == []


@pytest.mark.parametrize("name,plural", [("dress", "dresses"), ("sheep", "sheep"),
                                         ("ankle boot", "ankle boots"), ("dog", "dogs"),
                                         ("butterfly", "butterflies"), ("jersey", "jerseys")])
def test_plurals(name, plural):
    assert _plural(name) == plural


def test_surface_forms_include_aliases_but_a_digit_is_never_a_bare_word():
    import random

    rng = random.Random(0)
    seen = {surface({"name": "cat", "aliases": ["kitty", "feline", "tabby", "moggy"]}, rng)
            for _ in range(200)}  # fmt: skip
    assert seen == {"cat", "cats", "kitty", "feline", "tabby"}  # the first three aliases
    assert {surface({"name": "cat", "aliases": ["kitty"]}, rng, False) for _ in range(50)} == \
        {"cat", "cats"}  # fmt: skip
    seen = {surface({"name": "one", "aliases": ["single"]}, rng) for _ in range(200)}
    assert seen == {"ones", "1", "1s", "the digit one"}  # not "No one though."
    assert surface({"name": "cat", "aliases": None}, rng) in {"cat", "cats"}
    assert all("{c}" in t for t in EXCLUDE + DROP)


def _tailor_pacs() -> tuple[list[dict], dict[str, set[str]], dict[str, set[str]]]:
    """Tailor-PACS's classes, each one's plain forms (name, plural, numeral) and its aliases."""
    from trainer.data.catalogue import catalogue_json

    classes = catalogue_json()["classes"]
    plain = {c["name"]: {c["name"], _plural(c["name"])} for c in classes}
    for k, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven",
                           "eight", "nine")):
        plain[w] |= {str(k), f"{k}s"}
    return classes, plain, {c["name"]: set(map(str.lower, c["aliases"])) for c in classes}


def _says(text: str, forms: set[str]) -> bool:
    padded = " " + re.sub(r"[^\w\s-]", " ", text.lower()) + " "
    return any(f" {f} " in padded for f in forms)


def test_no_foreign_thing_names_a_tailor_pacs_class_or_alias():
    _, plain, aliases = _tailor_pacs()
    for thing in [t for things in FOREIGN.values() for t in things]:
        assert not [n for n in plain if _says(thing, plain[n] | aliases[n])], thing


def test_on_tailor_pacs_a_drop_names_its_class_plainly_and_an_exclusion_one_other_class():
    classes, plain, aliases = _tailor_pacs()
    asks = [["cat", "dog", "horse"], ["shirt", "coat", "bag"], ["one", "two", "three"]]
    rows = [{"id": f"r{i}", "description": "x", "domain": None, "expect": asks[i % 3]}
            for i in range(300)]  # fmt: skip
    made = counterfactuals(rows, classes, 1.0, seed=0)
    assert len(made) == 300
    for row in made:
        clause, asked = row["description"][2:], set(rows[int(row["id"][1:-3])]["expect"])
        named = {n for n in plain if _says(clause, plain[n] | aliases[n])}
        if gone := asked - set(row["expect"]):  # by a plain form: an alias may be a narrower
            (c,) = gone                        # kind, and "no pup" does not drop every dog
            assert _says(clause, plain[c]) and not _says(clause, aliases[c] - plain[c]), clause
        else:
            assert len(named) == 1 and not named & asked, clause


def test_the_trainer_adds_them_only_when_asked_and_records_the_share(tmp_path):
    from model_store.testing_text import make_tiny_encoder

    catalogue = tmp_path / "catalogue.json"
    catalogue.write_text(json.dumps({"classes": CLASSES, "domains": ["photo"]}))
    data = tmp_path / "train.jsonl"
    data.write_text("".join(json.dumps({**r, "kind": "natural"}) + "\n" for r in ROWS * 4))
    common = ["--data", str(data), "--catalogue", str(catalogue), "--epochs", "1",
              "--base", str(make_tiny_encoder(tmp_path / "encoder")), "--device", "cpu"]
    plain = reader_main([*common, "--out", str(tmp_path / "plain"), "--counterfactuals", "0",
                         "--foreign", "0"])
    more = reader_main([*common, "--out", str(tmp_path / "more"), "--counterfactuals", "1",
                        "--foreign", "1"])  # foreign: Tailor-PACS's things, not this catalogue's
    assert plain["rows"] == 16 and (more["rows"], more["labelled"]) == (16 + 8, 16)
    with pytest.raises(SystemExit, match="shares"):
        reader_main([*common, "--out", str(tmp_path / "bad"), "--counterfactuals", "30"])
    assert [plain["recipe"][k] for k in ("counterfactuals", "foreign")] == [0.0, 0.0]
    assert [more["recipe"][k] for k in ("counterfactuals", "foreign")] == [1.0, 1.0]
    defaults = _parser().parse_args([])  # the shares of stop 59
    assert (defaults.counterfactuals, defaults.foreign) == (0.3, 0.15)  # set, then kept
