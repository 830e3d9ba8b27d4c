"""e2e test configuration: the ``e2e`` marker and an importable ``claude_harness``."""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:  # works under any --import-mode
    sys.path.insert(0, _HERE)


def pytest_configure(config):
    config.addinivalue_line("markers", "e2e: drives a real agent binary against a fake upstream")
