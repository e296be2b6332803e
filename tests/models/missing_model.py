"""What a real-model test does when its model or reference is not in the cache: skip (exit 77), or fail (exit 1)
when KILN_REQUIRE_MODELS=1 says the cache must be complete (CI). The rule is tests/support/kiln_requirements.py's."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from kiln_requirements import skip_or_fail  # noqa: E402


def missing_model(message):
    """Prints why and exits: 1 under KILN_REQUIRE_MODELS=1, else 77 (ctest's SKIP_RETURN_CODE)."""
    skip_or_fail("MODELS", message)
