"""The README names only files the project has: every path under one of the project's folders
and every document (a capitalised Markdown name) it mentions exists. It once sent readers to a
DESIGN.md that is not in the repository. The reader's own files (`my-pack.toml`, `<data>/...`,
a report's `report.md`) are not paths of the project and are left alone."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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


def test_ci_runs_the_readmes_test_command_verbatim():
    """What CI runs on a clean clone is what the README tells a reader to run, so the README's
    promise (the suite in two processes, within four minutes) is the one CI checks."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)\n```", readme, flags=re.S)
    [command] = [b for b in blocks if "pytest" in b]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci[-1] == command
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "-n 2" in project["tool"]["pytest"]["ini_options"]["addopts"]  # two processes, from the test extra:
    assert any(r.startswith("pytest-xdist") for r in project["project"]["optional-dependencies"]["test"])
