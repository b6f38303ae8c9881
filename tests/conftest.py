"""Shared test set-up: no test ever reads or writes the player's real data folder."""
import os
import tempfile

import pytest

_ISOLATED = tempfile.mkdtemp(prefix="ridge-tests-")
os.environ["RIDGE_SAVE_DIR"] = os.path.join(_ISOLATED, "saves")
os.environ.pop("RIDGE_CATALOG", None)


@pytest.fixture
def catalog():
    from engine.catalog import builtin_catalog

    return builtin_catalog()
