"""A user's catalogue for ``tailor train taper --data PATH [--catalogue FILE]`` (issue 14 §1).

The optional file (YAML or JSON) describes the classes of an image tree and its domains::

    classes:
      ankle_boot:                     # a class folder name (or the same with spaces)
        name: ankle boot              # display name (default: the folder name, _ → space)
        definition: Footwear that covers the foot and rises just above the ankle.
        prompts: [a photo of an ankle boot., a product shot of an ankle boot.]
        aliases: [boot, bootie]       # other words people use: the request resolver matches them
        descriptions:                 # how people describe it without its name (resolver views)
          - a short boot that stops just above the ankle
        group: footwear               # classes of a group share a stage-2 specialist
    domains:
      studio: product photos on a white background   # what the resolver matches style words to
    subgroups:                        # a word for several classes: "footwear only" asks for them
      footwear: [ankle_boot, sneaker, sandal]

Every key is optional. Without groups, classes are clustered into ``num_groups`` groups by
their text embeddings (name and definition), so every dataset gets several specialists; a
class's task neighbours are the other classes nearest in that space, its group first.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from model_store.domains import DOMAIN_DESCRIPTIONS
from trainer.data.catalogue import DOMAIN_TEMPLATES, GENERIC_TEMPLATES

_USER_DOMAIN_TEMPLATES = ("a {d} image of {x}.", "a {d} picture of {x}.", "{x}, {d}.",
                          "an image of {x} ({d}).")
_CLASS_KEYS = {"name", "definition", "prompts", "aliases", "descriptions", "group"}


@dataclass
class UserCatalogue:
    """Entries in label order (``name``, ``group``, ``prompts``, ``definition``, ``aliases``,
    ``descriptions``, ``neighbours``, ``domain_prompts``), group names, domains and the
    domains' descriptions."""

    entries: list[dict[str, Any]]
    groups: list[str]
    domains: list[str]
    descriptions: dict[str, str]
    subgroups: dict[str, list[str]] = field(default_factory=dict)

    @property
    def group_ids(self) -> list[int]:
        return [self.groups.index(e["group"]) for e in self.entries]

    def artifact_json(self) -> dict[str, Any]:
        """The artifact's ``catalogue.json``."""
        keep = ("name", "group", "prompts", "definition", "aliases", "descriptions", "neighbours")
        return {"classes": [{k: e[k] for k in keep} for e in self.entries],
                "groups": self.groups, "domains": self.domains,
                "domain_descriptions": self.descriptions, "subgroups": self.subgroups}


def read_catalogue_file(path: str | Path) -> dict[str, Any]:
    """Parse and check the file's shape (ValueError naming the file and the entry)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"catalogue file {path} does not exist")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix.lower() == ".json":
            doc = json.loads(text)
        else:
            import yaml

            doc = yaml.safe_load(text)
    except Exception as exc:  # noqa: BLE001 - any parser error is the user's file
        raise ValueError(f"{path}: not valid {path.suffix or 'YAML'}: {exc}") from None
    doc = doc or {}
    if not isinstance(doc, dict) or set(doc) - {"classes", "domains", "subgroups"}:
        raise ValueError(f"{path}: expected a mapping with 'classes', 'domains' and/or "
                         "'subgroups'")
    if not all(isinstance(v, list) for v in (doc.get("subgroups") or {}).values()):
        raise ValueError(f"{path}: 'subgroups' must map a word to a list of classes")
    for key, entry in (doc.get("classes") or {}).items():
        if not isinstance(entry, dict) or set(entry) - _CLASS_KEYS:
            raise ValueError(f"{path}: class {key!r} must be a mapping of {sorted(_CLASS_KEYS)}")
        for listed in ("prompts", "aliases", "descriptions"):
            if not isinstance(entry.get(listed, []), list):
                raise ValueError(f"{path}: class {key!r}: {listed} must be a list")
    if not isinstance(doc.get("domains") or {}, dict):
        raise ValueError(f"{path}: 'domains' must map a domain folder to its description")
    return doc


def _prompts(name: str, given: Sequence[str] | None) -> list[str]:
    """Exactly ``len(GENERIC_TEMPLATES)`` prompts (they stack into one tensor): the user's,
    cycled, or the generic templates around the name."""
    p = len(GENERIC_TEMPLATES)
    if given:
        return [str(given[i % len(given)]) for i in range(p)]
    return [t.format(f"{'an' if name[0] in 'aeiou' else 'a'} {name}") for t in GENERIC_TEMPLATES]


def _domain_prompts(name: str, domain: str) -> list[str]:
    article = f"{'an' if name[0] in 'aeiou' else 'a'} {name}"
    if domain in DOMAIN_TEMPLATES:
        return [t.format(article) for t in DOMAIN_TEMPLATES[domain]]
    words = domain.replace("_", " ")
    return [t.format(d=words, x=article) for t in _USER_DOMAIN_TEMPLATES]


def _kmeans(x: np.ndarray, k: int, seed: int = 0, iters: int = 50) -> np.ndarray:
    """Cosine k-means with farthest-point init (deterministic). WHY not scikit-learn: it is
    not a dependency, and this is ten lines on a few dozen vectors."""
    centres = [x[0]]
    for _ in range(1, k):
        centres.append(x[np.argmin(np.max(x @ np.stack(centres).T, axis=1))])
    c = np.stack(centres)
    for _ in range(iters):
        assign = np.argmax(x @ c.T, axis=1)
        new = np.stack([x[assign == j].mean(0) if (assign == j).any() else c[j]
                        for j in range(k)])
        new /= np.linalg.norm(new, axis=1, keepdims=True) + 1e-12
        if np.allclose(new, c):
            break
        c = new
    return np.argmax(x @ c.T, axis=1)


def build_catalogue(class_names: Sequence[str], domains: Sequence[str], spec: dict | None,
                    embed: Callable[[list[str]], np.ndarray], num_groups: int) -> UserCatalogue:
    """The catalogue of an image tree's classes (folder names) and domains, checked against
    the file ``spec``: a class or domain in the file without a folder, or two classes with one
    display name, is a ValueError naming them."""
    spec = spec or {}
    by_norm = {n.replace("_", " "): n for n in class_names}
    given = {str(k).replace("_", " "): v for k, v in (spec.get("classes") or {}).items()}
    if missing := sorted(set(given) - set(by_norm)):
        raise ValueError(f"catalogue classes without an image folder: {missing}")
    if missing := sorted(set(spec.get("domains") or {}) - set(domains)):
        raise ValueError(f"catalogue domains without a folder: {missing}")
    entries = []
    for folder in class_names:
        g = given.get(folder.replace("_", " "), {})
        name = str(g.get("name") or folder.replace("_", " ")).strip()
        entries.append({"name": name, "group": g.get("group"), "prompts": _prompts(
            name, g.get("prompts")), "definition": str(g.get("definition") or ""),
            "aliases": [str(a) for a in g.get("aliases", [])],
            "descriptions": [str(d) for d in g.get("descriptions", [])],
            "domain_prompts": {d: _domain_prompts(name, d) for d in domains}})
    if dup := sorted({e["name"] for e in entries if [x["name"] for x in entries].count(e["name"])
                      > 1}):
        raise ValueError(f"two class folders share the display name(s) {dup}")
    vecs = embed([f"{e['name']}. {e['definition']}" for e in entries])
    vecs = vecs / (np.linalg.norm(vecs, axis=1, keepdims=True) + 1e-12)
    if any(e["group"] is None for e in entries):
        assign = _kmeans(vecs, max(1, min(num_groups, len(entries))))
        for e, a in zip(entries, assign, strict=True):
            e["group"] = e["group"] or f"group{int(a)}"
    _neighbours(entries, vecs)
    groups = sorted({str(e["group"]) for e in entries})
    known = spec.get("domains") or {}
    desc = {d: str(known.get(d) or DOMAIN_DESCRIPTIONS.get(d) or d.replace("_", " "))
            for d in domains}
    return UserCatalogue(entries, groups, list(domains), desc,
                         _subgroups(spec.get("subgroups") or {}, by_norm, entries))


def _subgroups(spec: dict, by_norm: dict[str, str], entries: list[dict]) -> dict[str, list[str]]:
    """The file's sub-groups as display names (each member a class folder or display name;
    ValueError naming the unknown ones), for the request resolver ("footwear only")."""
    display = {e["name"]: e["name"] for e in entries}
    display |= {norm: entries[i]["name"] for i, norm in enumerate(by_norm)}
    out = {}
    for word, members in spec.items():
        names = [display.get(str(m).replace("_", " ")) for m in members]
        if None in names or len(set(names)) < 2:
            raise ValueError(f"subgroup {word!r} needs two or more known classes, got {members}")
        out[str(word).lower()] = names
    return out


def _neighbours(entries: list[dict], vecs: np.ndarray) -> None:
    """Each class's other classes, its own group first, nearest text embedding first."""
    sim = vecs @ vecs.T
    for i, e in enumerate(entries):
        order = [int(j) for j in np.argsort(-sim[i], kind="stable") if j != i]
        same = [entries[j]["name"] for j in order if entries[j]["group"] == e["group"]]
        e["neighbours"] = same + [entries[j]["name"] for j in order
                                  if entries[j]["group"] != e["group"]]

