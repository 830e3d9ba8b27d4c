"""The pinned agents' lock file (and the runner tests' jest lock, fixtures/runners) installs with
`npm ci` on a clean tree, every package pinned by its integrity hash.

`npm ci` refuses a lock in which a package names an optional dependency
that has no entry of its own ("Missing: X@ from lock file").  The registry
this project installs from carries only the packages for this machine's
platform, so `npm install` writes no entry for the others; they are
recorded as optional stubs with their `os`/`cpu`, which `npm ci` skips.
A node_modules left from an earlier install hides the fault locally, so
it is checked here on the lock itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
LOCKS = [FIXTURES / "agents" / "package-lock.json", FIXTURES / "runners" / "package-lock.json"]


def _packages(lock: Path) -> dict[str, dict]:
    return json.loads(lock.read_text(encoding="utf-8"))["packages"]


def _resolvable(packages: dict[str, dict], owner: str, dep: str) -> bool:
    # npm looks in the owner's own node_modules, then each enclosing one.
    base = owner
    while True:
        if f"{base}/node_modules/{dep}".lstrip("/") in packages:
            return True
        if not base:
            return False
        cut = base.rfind("/node_modules/")
        base = base[:cut] if cut >= 0 else ""


@pytest.mark.parametrize("lock", LOCKS, ids=lambda lock: lock.parent.name)
def test_every_optional_dependency_has_an_entry(lock: Path) -> None:
    packages = _packages(lock)
    missing = sorted(
        f"{dep} (of {owner or 'the root'})"
        for owner, entry in packages.items()
        for dep in entry.get("optionalDependencies") or {}
        if not _resolvable(packages, owner, dep)
    )
    assert missing == [], "npm ci would refuse the lock: " + ", ".join(missing)


@pytest.mark.parametrize("lock", LOCKS, ids=lambda lock: lock.parent.name)
def test_the_lock_pins_what_the_manifest_asks_for(lock: Path) -> None:
    wanted = json.loads(lock.with_name("package.json").read_text(encoding="utf-8"))["dependencies"]
    packages = _packages(lock)
    assert packages[""]["dependencies"] == wanted
    for name, version in wanted.items():
        assert packages[f"node_modules/{name}"]["version"] == version, name


def test_the_runner_lock_pins_every_package_by_its_integrity_hash() -> None:
    packages = _packages(LOCKS[1])
    unpinned = sorted(name for name, entry in packages.items()
                      if name and not entry.get("link") and not str(entry.get("integrity", "")).startswith("sha512-"))
    assert unpinned == []
