"""The README names only files the project has: every path under one of the project's folders
and every document (a capitalised Markdown name) it mentions exists. It once sent readers to a
DESIGN.md that is not in the repository. The reader's own files (`my-pack.toml`, `<data>/...`,
a report's `report.md`) are not paths of the project and are left alone."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("app/", "engine/", "puzzles/", "saves/", "tests/", "bench/", ".ci/")


def mentioned_paths(text: str) -> set[str]:
    tokens = set(re.findall(r"`([^`\s]+)`", text)) | set(re.findall(r"\]\(([^)\s]+)\)", text))
    documents = set(re.findall(r"(?<![\w/<.-])([A-Z][A-Z0-9_-]*\.md)\b", text))  # README.md, DESIGN.md
    return {t for t in tokens if t.startswith(FOLDERS)} | documents


def test_every_file_the_readme_names_exists():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    paths = mentioned_paths(text)
    assert "app/game.py" in paths and "tests/fixtures/measurements.toml" in paths  # the check sees them
    missing = sorted(p for p in paths if not any(ROOT.glob(p)))
    assert not missing, f"the README names files the project does not have: {missing}"


def test_a_missing_design_document_would_be_caught():
    assert "DESIGN.md" in mentioned_paths("see DESIGN.md for the API")
