"""Every file location Ridge uses, in one place, so tests and `--save-dir` can move all of them.

The data folder is, first match wins: an explicit override (the `--save-dir` option), the
`RIDGE_SAVE_DIR` environment variable, then `platformdirs.user_data_dir("ridge")`.
"""
from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "ridge"
ENV_SAVE_DIR = "RIDGE_SAVE_DIR"


MAX_PATH = 4000  # characters of a save folder path; PATH_MAX is 4096 bytes on Linux
MAX_PART = 255  # bytes of one folder name (NAME_MAX)


def data_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The folder holding profiles, settings, the user catalog and logs."""
    if override is not None and str(override) != "":
        return _usable(_expand(override, "--save-dir"), "--save-dir")
    env = os.environ.get(ENV_SAVE_DIR, "")
    if env:
        return _usable(_expand(env, ENV_SAVE_DIR), ENV_SAVE_DIR)
    import platformdirs  # only when needed: tests and --save-dir never pay for it

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def log_path(override: str | os.PathLike[str] | None = None) -> Path:
    """The error log: `<data dir>/logs/ridge.log`."""
    return data_dir(override) / "logs" / "ridge.log"


def user_catalog_path(override: str | os.PathLike[str] | None = None) -> Path:
    """The player's own additions to the model and hardware catalogs: `<data dir>/catalog.toml`."""
    return data_dir(override) / "catalog.toml"


def packs_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The player's own puzzle packs, loaded beside the built-in ones: `<data dir>/packs`."""
    return data_dir(override) / "packs"


def reports_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The exam reports the game writes: `<data dir>/reports`."""
    return data_dir(override) / "reports"


def matches_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """A match's results, one file per player and code: `<data dir>/matches`."""
    return data_dir(override) / "matches"


def _expand(text: str | os.PathLike[str], what: str) -> Path:
    """`text` with a leading ~ or ~user expanded; SaveError when there is no such home folder
    (Python raises RuntimeError for `~nouser`)."""
    try:
        return Path(text).expanduser()
    except (RuntimeError, KeyError, ValueError):
        from engine.bounds import shown
        from saves.errors import SaveError

        head = str(text).split("/", 1)[0]
        raise SaveError(f"{what}: no home folder for {shown(head, 60)!r}; write the path out in full") from None


def _usable(folder: Path, what: str) -> Path:
    """`folder`, or SaveError when no system could open it (a NUL byte, a name too long), so
    the mistake is one clear line instead of an OSError from deep inside a read."""
    from engine.bounds import shown
    from saves.errors import SaveError

    text = str(folder)
    if "\0" in text:
        raise SaveError(f"{what}: a folder path cannot contain a NUL character")
    if len(text) > MAX_PATH:
        raise SaveError(f"{what}: the folder path is {len(text):,} characters long (at most {MAX_PATH:,}): {shown(text, 60)}")
    for part in folder.parts:
        if len(part.encode("utf-8", "surrogateescape")) > MAX_PART:
            raise SaveError(f"{what}: a folder name is longer than {MAX_PART} bytes: {shown(part, 60)}")
    return folder


def resolved(folder: Path, what: str = "--save-dir") -> Path:
    """`folder` as an absolute path with its links followed; SaveError (one line) for a link
    that loops, instead of Python's RuntimeError."""
    try:
        return folder.resolve()
    except (RuntimeError, OSError) as exc:
        from engine.bounds import shown
        from saves.errors import SaveError

        reason = "a symbolic link loop" if isinstance(exc, RuntimeError) else (exc.strerror or str(exc))
        raise SaveError(f"{what}: {shown(folder, 80)} cannot be opened: {reason}") from None
