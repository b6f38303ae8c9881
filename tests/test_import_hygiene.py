"""The engine, puzzles and saves work without the UI: importing them never loads Textual, and the
`ridge solve` path loads neither numpy nor pydantic."""
import subprocess
import sys

import pytest

HEADLESS = ["engine.catalog", "engine.deployment", "engine.analysis", "engine.levers", "engine.contract",
            "engine.derivation", "engine.hfconfig", "engine.grid"]


def _loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(sorted(m.split('.')[0] for m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


@pytest.mark.parametrize("package", ["engine", "puzzles", "saves"])
def test_headless_packages_never_import_textual(package):
    import importlib
    import pkgutil

    pkg = importlib.import_module(package)
    modules = [f"{package}.{m.name}" for m in pkgutil.walk_packages(pkg.__path__)]
    code = "\n".join(f"import {m}" for m in [package, *modules])
    loaded = _loaded_after(code)
    assert "textual" not in loaded and "rich" not in loaded


def test_solve_path_is_lean():
    loaded = _loaded_after(
        "import io, contextlib\nfrom app.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['solve', '--model', 'llama-3-70b', '--gpus', '4', '--json'])"
    )
    for heavy in ("textual", "numpy", "pydantic", "rich"):
        assert heavy not in loaded, heavy
