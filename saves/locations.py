"""Every file location Ridge uses, in one place, so tests and `--save-dir` can move all of them.

The data folder is, first match wins: an explicit override (the `--save-dir` option), the
`RIDGE_SAVE_DIR` environment variable, then `platformdirs.user_data_dir("ridge")`.
"""
from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "ridge"
ENV_SAVE_DIR = "RIDGE_SAVE_DIR"


def data_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The folder holding profiles, settings, the user catalog and logs."""
    if override is not None and str(override) != "":
        return Path(override).expanduser()
    env = os.environ.get(ENV_SAVE_DIR, "")
    if env:
        return Path(env).expanduser()
    import platformdirs  # only when needed: tests and --save-dir never pay for it

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def log_path(override: str | os.PathLike[str] | None = None) -> Path:
    """The error log: `<data dir>/logs/ridge.log`."""
    return data_dir(override) / "logs" / "ridge.log"


def user_catalog_path(override: str | os.PathLike[str] | None = None) -> Path:
    """The player's own additions to the model and hardware catalogs: `<data dir>/catalog.toml`."""
    return data_dir(override) / "catalog.toml"


def settings_path(override: str | os.PathLike[str] | None = None) -> Path:
    """Folder-wide settings (the last profile used): `<data dir>/settings.toml`."""
    return data_dir(override) / "settings.toml"
