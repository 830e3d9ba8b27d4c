"""e2e test configuration: the ``e2e`` marker, importable harness modules, and the Codex
``scratch`` fixture."""

import sys
from pathlib import Path

import pytest

import os

# daemons the hook clients start in test workspaces must not outlive the suite by 30 min
os.environ.setdefault("VACANT_DAEMON_IDLE_S", "60")

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:  # works under any --import-mode
    sys.path.insert(0, _HERE)


def pytest_configure(config):
    config.addinivalue_line("markers", "e2e: drives a real agent binary against a fake upstream")


def _scratch(request, base):
    from codex_harness import CodexScratch

    failed_before = request.session.testsfailed
    made = CodexScratch(request.node.name, base).__enter__()
    (made.path / "tmp").mkdir()  # a TMPDIR of the test's own for the agents' temp files
    yield made
    if request.session.testsfailed == failed_before:
        made.__exit__(None, None, None)


@pytest.fixture
def scratch(request):
    """HOME, CODEX_HOME and a workspace where Codex accepts them (never under a temporary
    directory, whatever the checkout's path), kept when the test failed."""
    yield from _scratch(request, None)


@pytest.fixture
def plain_scratch(request, tmp_path):
    """The same layout under pytest's tmp_path, for tests that run no Codex."""
    yield from _scratch(request, tmp_path)


@pytest.fixture(scope="session")
def suite_tree(tmp_path_factory) -> Path:
    """more-itertools' sdist (tests/plugins/sdist.py), downloaded and unpacked once per session (once
    for all xdist workers: their base directories share a parent)."""
    from sdist import MORE_ITERTOOLS, fetch_sdist

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    return fetch_sdist(shared / "sdist-cache", *MORE_ITERTOOLS)


@pytest.fixture(scope="session")
def wheel_venv(tmp_path_factory) -> Path:
    """vacant as a user installs it, built once per session: a wheel of this checkout (built in a
    temporary directory: nothing lands in the checkout), installed with its dependencies into a
    fresh venv outside the checkout. Returns the venv."""
    import subprocess
    import zipfile

    base = tmp_path_factory.mktemp("wheel")
    dist = base / "dist"
    repo = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(repo)],
                   check=True, cwd=base, capture_output=True)
    (wheel,) = dist.glob("vacant_trace-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for shipped in ("vacant/platforms/assets/opencode-plugin.js", "vacant/demo/session.json", "vacant/vacant-hook-client.py"):
        assert shipped in names
    assert not any(name.startswith(("tests/", "fixtures/")) for name in names)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    str(wheel)], check=True, capture_output=True)
    return venv
