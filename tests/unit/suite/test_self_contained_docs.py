"""Code and docs refer only to what is in the repository: no pointer to a design document or a
platform notes folder that a fresh clone does not have."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
OUTSIDE = re.compile(r"DESIGN(?:\.md| §)|shared/platforms|\.\./shared/")


def test_no_reference_to_documents_outside_the_repository():
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    offenders = []
    for name in tracked:
        path = REPO / name
        if path.suffix not in (".py", ".md", ".json", ".toml", ".sh", ".js", ".ts") or not path.is_file():
            continue
        if name == "tests/unit/suite/test_self_contained_docs.py":
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if OUTSIDE.search(line):
                offenders.append(f"{name}:{number}: {line.strip()[:100]}")
    assert offenders == []
