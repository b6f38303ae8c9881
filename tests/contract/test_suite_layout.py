"""The suite's own layout: tests sit in folders that mirror the rooms, share their helpers through
tests/helpers (never by importing another test module), and wait for the app in one way."""
from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOMS = ("engine", "puzzles", "saves", "app", "live", "contract")
SETTLE = "helpers/pilot.py:settle"   # press, then wait until the app is quiet: the one definition


def _modules():
    return sorted(p for p in TESTS.rglob("*.py") if ".hypothesis" not in p.parts)


def imported_tests(source: str) -> list[str]:
    """The test modules a file imports (`test_*`, bare or under `tests.`), at any depth."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        found += [n for n in names if any(part.startswith("test_") for part in n.split("."))]
    return found


def test_no_test_imports_another():
    found = {p.relative_to(TESTS).as_posix(): imported_tests(p.read_text(encoding="utf-8")) for p in _modules()}
    assert not {k: v for k, v in found.items() if v}, "share it through tests/helpers instead"
    assert imported_tests("def f():\n    from test_app import settle\n") == ["test_app"]  # the check sees one


def test_every_test_module_sits_in_its_room():
    misplaced = [p.relative_to(TESTS).as_posix() for p in TESTS.rglob("test_*.py")
                 if ".hypothesis" not in p.parts and p.parent.name not in ROOMS]
    assert not misplaced, f"test modules outside the room folders {ROOMS}: {misplaced}"


def test_the_app_is_waited_for_by_the_one_settle():
    """`settle` lives in one helpers module only (SETTLE): a headless check of the layout."""
    defined = [f"{p.relative_to(TESTS).as_posix()}:{node.name}" for p in _modules()
               for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.strip("_") == "settle"]
    assert defined == [SETTLE], defined
