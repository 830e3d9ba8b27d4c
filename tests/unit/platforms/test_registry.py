"""The platform registry: every platform module is registered, each maps its tools onto the core's
closed tool kinds, and each names its `vacant do` driver."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from hypothesis import given
from hypothesis import strategies as st

import vacant.platforms
from vacant.core.calls import TOOL_KINDS
from vacant.platforms.all_platforms import ALIASES, PLATFORMS, UnknownPlatform, load
from vacant.platforms.driver import Driver

# tool name -> (kind, a representative input, the path or command the intent must carry)
KNOWN = {
    "claude": {"Bash": ("shell", {"command": "ls"}, "ls"), "Write": ("write", {"file_path": "a", "content": "x"}, "a"),
               "Edit": ("edit", {"file_path": "a", "old_string": "x", "new_string": "y"}, "a"),
               "MultiEdit": ("edit", {"file_path": "a", "edits": []}, "a"),
               "NotebookEdit": ("notebook", {"notebook_path": "n.ipynb"}, "n.ipynb"),
               "Read": ("read", {"file_path": "r"}, "r"), "Grep": ("read", {"path": "g"}, "g")},
    "codex": {"Bash": ("shell", {"command": "ls"}, "ls"), "apply_patch": ("patch", {"command": "*** Begin Patch"}, None),
              "view_image": ("read", {"path": "i.png"}, "i.png")},
    "opencode": {"bash": ("shell", {"command": "ls"}, "ls"), "write": ("write", {"filePath": "a", "content": "x"}, "a"),
                 "edit": ("edit", {"filePath": "a", "oldString": "x", "newString": "y"}, "a"),
                 "read": ("read", {"filePath": "r"}, "r")},
    "command": {},
}


def test_every_platform_module_is_registered():
    found = set()
    for info in pkgutil.iter_modules(vacant.platforms.__path__, "vacant.platforms."):
        module = importlib.import_module(info.name + (".platform" if info.ispkg else ""))
        if hasattr(module, "PLATFORM"):
            found.add(module.PLATFORM.name)
    assert found == set(PLATFORMS) and set(KNOWN) <= set(PLATFORMS)  # a new platform's tools: its own test


def test_aliases_resolve_and_unknown_names_are_refused():
    for alias, name in ALIASES.items():
        assert load(alias) is PLATFORMS[name]
    for bad in ("base", "driver", "all_platforms", "../claude", "", None):
        with pytest.raises(UnknownPlatform):
            load(bad)


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_each_platform_maps_its_own_tools_and_only_onto_the_closed_kinds(name):
    platform = PLATFORMS[name]
    for tool, (kind, tool_input, target) in KNOWN[name].items():
        got_kind, intent = platform.intent(tool, tool_input)
        assert got_kind == kind and got_kind in TOOL_KINDS
        if target is not None:
            assert target in (intent.get("path"), intent.get("command"))


@given(tool=st.text(max_size=20), tool_input=st.one_of(st.none(), st.text(max_size=20),
                                                        st.dictionaries(st.text(max_size=8), st.text(max_size=8))))
def test_any_input_gives_a_closed_kind_and_never_raises(tool, tool_input):
    for platform in PLATFORMS.values():
        kind, intent = platform.intent(tool, tool_input)
        assert kind is None or kind in TOOL_KINDS
        assert isinstance(intent, dict)


def test_drivers_are_drivers_or_absent():
    for platform in PLATFORMS.values():
        assert platform.driver is None or issubclass(platform.driver, Driver)
    assert PLATFORMS["command"].driver is None and all(PLATFORMS[n].driver for n in ("claude", "codex", "opencode"))


def test_the_trust_docs_wall_table_says_what_init_and_do_do_for_every_platform():
    """docs/TRUST.md's table (generated from these facts) names a platform's own sandbox exactly
    where `vacant init` sets one up, and `vacant do`'s bubblewrap exactly where it can wall it."""
    from vacant.commands.init import walls
    from vacant.platforms.all_platforms import REGISTERED, wall_table

    table = wall_table()
    for platform in REGISTERED:
        assert bool(platform.own_sandbox) == walls(platform), platform.name
        row = next(line for line in table.splitlines() if line.startswith(f"| {platform.name} |"))
        assert row.split(" | ")[2] == ("unwalled: " + platform.wall_refused if platform.wall_refused else "walled: bubblewrap")
