"""app/ is presentation: outside the command line (app/cli.py, flags.py, parser.py, app/commands/),
every module of app/ shows something through Textual, Rich or aiohttp, or is one of a short allowed
list. A module that imports none of them (directly, or through another module of app/, at any
level) holds headless rules that belong in engine, puzzles or saves.

The list below is today's, each with where it goes; it only ever shrinks. A module that leaves it
(its rules moved down, or it now draws with Textual) must be struck off, so the list stays true."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UI = ("textual", "rich", "aiohttp", "textual_serve")

# The three that stay: words, text plots and the terminal client's HTTP calls.
STAYS = {
    "app.labels": "the words table",
    "app.plots": "the text plots",
    "app.live.client": "the terminal client's HTTP calls",
}
# Headless today, and where each goes (issue 26, item 1, moved them all: keep it empty).
TO_MOVE: dict[str, str] = {}


def _module(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module an import statement names, function-level ones included."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def headless_app_modules(root: Path = ROOT) -> set[str]:
    """Modules of app/ (outside the command line, package files with no code aside) that reach
    none of the UI libraries, through app/'s own imports either."""
    imports = {_module(p, root): _imports(p) for p in (root / "app").rglob("*.py")}
    drawn = {m for m, names in imports.items() if any(n.split(".")[0] in UI for n in names)}
    grew = True
    while grew:
        more = {m for m, names in imports.items() if m not in drawn and names & drawn}
        drawn |= more
        grew = bool(more)
    command_line = {m for m in imports if m in ("app.cli", "app.__main__", "app.flags", "app.parser")
                    or m.startswith("app.commands")}
    trivial = {m for m in imports if (root / m.replace(".", "/") / "__init__.py").exists()
               and not imports[m]}
    return set(imports) - drawn - command_line - trivial


def test_app_is_presentation_apart_from_a_short_allowed_list():
    found = headless_app_modules()
    unexpected = sorted(found - set(STAYS) - set(TO_MOVE))
    assert not unexpected, (f"{unexpected} import nothing from Textual, Rich or aiohttp: their rules belong in "
                            f"engine, puzzles or saves")
    stale = sorted((set(STAYS) | set(TO_MOVE)) - found)
    assert not stale, f"{stale} no longer headless (or gone): strike them off the allowed list"


def test_the_check_sees_a_headless_module(tmp_path):
    """The scan itself: a rule module among screens is found; one that draws, or uses one that
    draws, is not."""
    (tmp_path / "app" / "screens").mkdir(parents=True)
    (tmp_path / "app" / "__init__.py").write_text("")
    (tmp_path / "app" / "rules.py").write_text("import math\n")
    (tmp_path / "app" / "screens" / "__init__.py").write_text("")
    (tmp_path / "app" / "screens" / "board.py").write_text("def f():\n    from textual.app import App\n")
    (tmp_path / "app" / "uses_board.py").write_text("from app.screens.board import f\n")
    assert headless_app_modules(tmp_path) == {"app.rules"}
