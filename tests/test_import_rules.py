"""The dependency rule trainer -> model_store <- service, checked on the source (no imports run)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {
    "model_store": {"trainer", "service", "tailor"},
    "service": {"trainer", "tailor"},
    "trainer": {"service", "tailor"},
}


def _imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_run_one_way(package: str) -> None:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"package {package} has no modules"
    offenders = {
        str(f.relative_to(ROOT)): sorted(_imported_packages(f) & FORBIDDEN[package]) for f in files
    }
    offenders = {k: v for k, v in offenders.items() if v}
    assert not offenders, f"{package} must not import {sorted(FORBIDDEN[package])}: {offenders}"


def test_checker_detects_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nfrom service.main import create_app\n")
    assert _imported_packages(bad) == {"os", "service"}


# ---- inside a package: no import cycles, and the service's layers ------------------------

PACKAGES = ("model_store", "service", "trainer", "tailor")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _targets(path: Path, known: set[str]) -> set[str]:
    """Modules of ``known`` that ``path`` imports anywhere (module level or inside functions):
    ``from a.b import c`` names ``a.b.c`` when that is a module, else ``a.b``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in known else node.module)
    return found & known


def _graph(package: str) -> dict[str, set[str]]:
    files = sorted((ROOT / package).rglob("*.py"))
    names = {_module_name(f): f for f in files}
    known = set(names)
    return {m: _targets(f, known) - {m} for m, f in names.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (a list of modules, first == last), or None.

    Package ``__init__`` modules are skipped as targets: importing ``a.b.c`` runs ``a.b``'s
    ``__init__``, but an ``__init__`` that imports nothing cannot close a cycle.
    """
    colour: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        colour[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if colour.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in colour and (found := visit(nxt)):
                return found
        colour[node] = 2
        stack.pop()
        return None

    for start in sorted(graph):
        if start not in colour and (found := visit(start)):
            return found
    return None


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycles_inside_a_package(package: str) -> None:
    cycle = _cycle(_graph(package))
    assert cycle is None, f"import cycle in {package}: {' -> '.join(cycle or [])}"


def test_cycle_checker_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a"}}) is None


# Which parts of the service may import which: core (settings, db, auth, metrics, ...) imports
# only core; the caches build on core; kinds on both; the orchestrator on all three; only the
# app factory and the HTTP layer may import service.api (so nothing below it depends on HTTP).
SERVICE_LAYERS = {
    "service.core": {"service.core"},
    "service.cache": {"service.core", "service.cache"},
    "service.kinds": {"service.core", "service.cache", "service.kinds"},
    "service.personalization": {"service.core", "service.cache", "service.kinds"},
}


def _layer(module: str) -> str:
    return next((lay for lay in SERVICE_LAYERS if module == lay or module.startswith(lay + ".")),
                module)  # fmt: skip


def test_service_layers_import_downwards_only() -> None:
    graph = _graph("service")
    bad = {}
    for module, targets in graph.items():
        allowed = SERVICE_LAYERS.get(_layer(module))
        if allowed is None:
            continue
        wrong = sorted(t for t in targets if t != "service" and _layer(t) not in allowed)
        if wrong:
            bad[module] = wrong
    assert not bad, f"service layers imported upwards: {bad}"
    assert all(not t.startswith("service.api") for m, ts in graph.items()
               if not (m.startswith("service.api") or m in ("service.main", "service.cli"))
               for t in ts)  # fmt: skip
