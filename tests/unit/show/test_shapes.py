"""The commands print exactly the fields docs/VIEW_JSON.md (from vacant/show/shapes.py) documents;
the doc's drift is checked with every generated doc (tests/unit/test_gendocs.py)."""

from __future__ import annotations

import json

import pytest
from recording import cli

from vacant.show import shapes


def keys(value: dict, prefix: str = "") -> list[str]:
    found = []
    for key, inner in value.items():
        found.append(prefix + key)
        if isinstance(inner, list) and inner and isinstance(inner[0], dict) and key == "lines":
            found += keys(inner[0], f"{prefix}{key}[].")
    return found


@pytest.mark.slow
def test_the_commands_print_the_documented_fields(recording, ws, tmp_path):
    recording.write("a.txt", "one\n")
    recording.end()
    blame = json.loads(cli(["blame", "a.txt", "--json"], ws).stdout)
    assert keys(blame) == shapes.fields("blame")
    restored = json.loads(cli(["restore", "s1", "--step", "1", "--to", str(tmp_path / "out"), "--json"], ws).stdout)
    assert list(restored) == shapes.fields("restore")
    viewed = json.loads(cli(["view", "--no-open", "--json"], ws).stdout)
    assert list(viewed) == shapes.fields("view")
