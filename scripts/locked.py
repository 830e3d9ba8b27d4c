"""Check that a virtual environment holds exactly what a lock pins, and print the pins.

    python3 scripts/locked.py VENV LOCK [LOCK...]

Every `name==version` of the locks (locks/*.txt, made by scripts/lock) whose environment marker
holds on this interpreter must be installed at that version in VENV; a line of its own per lock
lists what was found. Exit 1 names each package missing or at another version. A distribution
the locks do not name (vacant itself, pip, an earlier install's leftovers) is listed, not refused.
Run by scripts/setup after each install; stdlib only (and pip's own packaging for the markers)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^ ;\\]+)\s*(?:;\s*([^\\#]+?))?\s*\\?\s*$")


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(lock: Path) -> list[tuple[str, str, str | None]]:
    """(normalised name, version, marker or None) of each pinned line, in the lock's order. A
    universal lock may pin one package on several lines under exclusive markers (numpy in
    locks/phoenix.txt: one version below Python 3.12, another from it)."""
    found = []
    for line in lock.read_text().splitlines():
        match = PIN.match(line)
        if match:
            found.append((normal(match[1]), match[2], match[3]))
    return found


def wanted(lock: Path) -> dict[str, str]:
    """{normalised name: version} of the pins whose environment marker holds on this interpreter."""
    return {name: version for name, version, marker in pins(lock) if applies(marker)}


def applies(marker: str | None) -> bool:
    if not marker:
        return True
    try:
        from packaging.markers import Marker
    except ImportError:
        from pip._vendor.packaging.markers import Marker
    return Marker(marker).evaluate()


def installed(venv: Path) -> dict[str, str]:
    """{normalised name: version} of every distribution VENV's interpreter sees."""
    code = ("import importlib.metadata as m\n"
            "for d in m.distributions(): print(d.metadata['Name'], d.version, sep='\\t')")
    out = subprocess.run([str(venv / "bin" / "python"), "-I", "-c", code], capture_output=True, text=True,
                         check=True).stdout
    return {normal(name): version for name, version in (line.split("\t", 1) for line in out.splitlines() if "\t" in line)}


def main(argv: list[str]) -> int:
    venv, locks = Path(argv[0]), [Path(arg) for arg in argv[1:]]
    have = installed(venv)
    wrong, named = [], set()
    for lock in locks:
        here = wanted(lock)
        named.update(here)
        wrong += [f"{name}: locked {version}, installed {have.get(name, 'nothing')}"
                  for name, version in sorted(here.items()) if have.get(name) != version]
        print(f"{venv}: {len(here)} locked in {lock}: " + " ".join(f"{n}=={v}" for n, v in sorted(here.items())))
    extra = sorted(f"{name}=={version}" for name, version in have.items() if name not in named)
    if extra:
        print(f"{venv}: not in the locks: {' '.join(extra)}")
    if wrong:
        print(f"{venv} is not what the locks pin:\n  " + "\n  ".join(wrong), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
