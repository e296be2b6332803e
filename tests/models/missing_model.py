"""What a real-model test does when its model or reference is not in the cache: skip (exit 77), or fail (exit 1)
when KILN_REQUIRE_MODELS=1 says the cache must be complete (CI)."""
import os
import sys

SKIPPED = 77


def missing_model(message):
    """Prints why and exits: 1 under KILN_REQUIRE_MODELS=1, else 77 (ctest's SKIP_RETURN_CODE)."""
    if os.environ.get("KILN_REQUIRE_MODELS") == "1":
        print(f"FAIL: {message} (KILN_REQUIRE_MODELS=1)")
        sys.exit(1)
    print(f"SKIP: {message}")
    sys.exit(SKIPPED)
