"""The rooms keep their arrows. Every module of engine, puzzles and saves works without the UI:
importing it never loads Textual (all are imported in one fresh interpreter, one after another,
so the first that pulls Textual in is named). The import contracts in pyproject.toml (layers, no
cycles, screens that never import screens) hold, as `lint-imports` checks them. And the
`ridge solve` path loads neither numpy nor pydantic."""
import subprocess
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
HEADLESS = ("engine", "puzzles", "saves")
UI = ("textual", "rich", "textual_serve")


def _loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(sorted(m.split('.')[0] for m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


def modules_of(package: str) -> list[str]:
    """Every module in the package's folder, found from the files (so none can hide from the
    check by not being imported by its package)."""
    folder = ROOT / package
    names = []
    for path in sorted(folder.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names


def test_every_headless_module_imports_without_textual():
    """One interpreter for the three rooms (it was one a room: importing more only loads more, so
    one that never loads the UI clears every module, and the first to load it is still named)."""
    modules = []
    for package in HEADLESS:
        found = modules_of(package)
        assert len(found) > 3, found
        modules += found
    probe = (
        "import importlib, sys\n"
        f"ui = {UI!r}\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "    pulled = [m for m in ui if m in sys.modules]\n"
        "    if pulled:\n"
        "        print(name, 'loads', ', '.join(pulled))\n"
        "        break\n"
        "else:\n"
        "    print('clean')\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "clean", out.stdout


def test_the_import_contracts_hold():
    """`lint-imports` (from the test extras, beside this interpreter) keeps every contract in
    pyproject.toml's [tool.importlinter]."""
    linter = Path(sys.executable).with_name("lint-imports")
    assert linter.exists(), "lint-imports is missing: install the test extras (pip install -e '.[test]')"
    assert "[tool.importlinter]" in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    out = subprocess.run([str(linter), "--no-cache"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "0 broken" in out.stdout, out.stdout[-2000:]


def test_app_uses_no_private_textual_name():
    """Textual's internals (`_dispatch_message`, `textual.widgets._footer`, ...) pin the version and
    break silently on upgrade. No module of app/ imports a private Textual module, and no
    attribute app/ reaches for (or defines on its subclasses) has the name of a private one of
    Textual's, which would read, override or shadow it. (`os._exit` is the standard library's,
    not Textual's: app/cli.py ends `ridge solve` with it.)"""
    import re

    import textual

    private = set()
    for path in Path(textual.__file__).parent.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        private |= set(re.findall(r"self\.(_[a-z][a-z0-9_]*)", text))
        private |= set(re.findall(r"def (_[a-z][a-z0-9_]*)", text))
    found = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(ROOT)
        found += [f"{where}: imports {m}" for m in re.findall(r"textual\.[a-z_.]*\._[a-z_]+", text)]
        used = set(re.findall(r"\.(_[a-z][a-z0-9_]*)", text.replace("os._exit(", "os.exit(")))
        found += [f"{where}: {name}" for name in sorted(used & private)]
    assert not found, "private Textual names in app/ (use the public API, or rename): " + "; ".join(found)


def test_solve_path_is_lean():
    loaded = _loaded_after(
        "import io, contextlib\nfrom app.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['solve', '--model', 'llama-3-70b', '--gpus', '4', '--json'])"
    )
    for heavy in ("textual", "numpy", "pydantic", "rich"):
        assert heavy not in loaded, heavy


def test_the_floor_and_realistic_paths_never_load_the_kernel_database():
    """The measured fidelity's optional extra is loaded only when asked for: not by `ridge solve`
    at the other fidelities, not by `ridge puzzles check`, and not by importing any module of
    the app (start-up). Both fidelities in one process (importing more only loads more)."""
    loaded = _loaded_after(
        "import io, contextlib\nfrom app.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    for fidelity in ('floor', 'realistic'):\n"
        "        main(['solve', '--model', 'mixtral-8x7b', '--gpus', '2', '--json', '--fidelity', fidelity])\n"
        "    main(['puzzles', 'show', 'two-phases-08', '--answer'])"
    )
    assert "aiconfigurator_core" not in loaded


def test_starting_the_app_never_loads_the_kernel_database():
    modules = [m for m in modules_of("app") if not m.startswith("app.screenshots") and m != "app.__main__"]
    loaded = _loaded_after("import importlib\n" + "".join(f"importlib.import_module({m!r})\n" for m in modules)
                           + "from app.game import make_app\nmake_app()")
    assert "textual" in loaded and "aiconfigurator_core" not in loaded
