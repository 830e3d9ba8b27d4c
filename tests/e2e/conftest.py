"""e2e test configuration: the ``e2e`` marker, importable harness modules, and the Codex
``scratch`` fixture."""

import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:  # works under any --import-mode
    sys.path.insert(0, _HERE)


def pytest_configure(config):
    config.addinivalue_line("markers", "e2e: drives a real agent binary against a fake upstream")


@pytest.fixture
def scratch(request):
    """HOME, CODEX_HOME and a workspace under .e2e-tmp/ (Codex refuses /tmp), kept when the test failed."""
    from codex_harness import CodexScratch

    failed_before = request.session.testsfailed
    made = CodexScratch(request.node.name).__enter__()
    (made.path / "tmp").mkdir()  # a TMPDIR outside /tmp for the agents' own temp files
    yield made
    if request.session.testsfailed == failed_before:
        made.__exit__(None, None, None)
