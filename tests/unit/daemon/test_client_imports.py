"""The lean client's imports, measured like the hook's: standard library and vacant only, and of
vacant only what locating the socket needs (the in-process hook is imported on fallback only)."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = r"""
import sys
before = set(sys.modules)
import vacant.daemon.client
stdlib = set(sys.stdlib_module_names)
extra = sorted({m.split(".")[0] for m in set(sys.modules) - before} - stdlib - {"vacant"})
ours = sorted(m for m in set(sys.modules) - before if m.startswith("vacant"))
print(__import__("json").dumps({"extra": extra, "ours": ours}))
"""


def test_the_client_imports_only_the_stdlib_and_what_finds_the_socket():
    out = subprocess.run([sys.executable, "-I", "-c", PROBE], capture_output=True, text=True, check=True).stdout
    found = json.loads(out)
    assert found["extra"] == []
    assert set(found["ours"]) <= {"vacant", "vacant.core", "vacant.core.locations", "vacant.daemon",
                                  "vacant.daemon.paths", "vacant.daemon.client"}
