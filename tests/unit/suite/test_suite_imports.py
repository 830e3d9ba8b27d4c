"""A test module that imports another by its bare name gets the first one on sys.path: with two
test modules of that name (tests/unit/do/test_do.py, tests/e2e/test_do.py), which one depends on the
order pytest loaded the directories' conftests in, and `pytest tests/e2e/test_opencode.py
tests/unit/...` failed to collect. Shared helpers live in modules of their own (*_harness.py); a
test module imported by name must have a name no other module under tests/ has."""

from __future__ import annotations

import ast
import collections
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]


def test_every_module_imported_by_bare_name_has_one_file_of_that_name():
    files = collections.defaultdict(list)
    for path in TESTS.rglob("*.py"):
        if "__pycache__" not in path.parts:
            files[path.stem].append(path.relative_to(TESTS))
    ambiguous = []
    for path in sorted(TESTS.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else \
                [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                if "." not in name and len(files.get(name, [])) > 1:
                    ambiguous.append(f"{path.relative_to(TESTS)} imports {name}: {sorted(map(str, files[name]))}")
    assert ambiguous == []
