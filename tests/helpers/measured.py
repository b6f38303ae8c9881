"""What tests of the measured fidelity share: a skip with the reason when the extra is absent."""
import pytest

from engine import measured

REASON = measured.unavailable()
needs_measured = pytest.mark.skipif(REASON is not None, reason=REASON or "")
