"""The hook's lean registry answers as the full one does: the same platform object for every name
and alias, the same error for any other, and, in a process that imported only it (as the hook
does), the gate's guarded settings files of every platform and only the named platform's module."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vacant.platforms import all_platforms, lean_registry


@pytest.mark.parametrize("name", sorted({*all_platforms.PLATFORMS, *all_platforms.ALIASES}))
def test_every_name_and_alias_loads_the_registrys_platform(name):
    assert lean_registry.load(name) is all_platforms.load(name)


@given(st.one_of(st.text(max_size=20), st.none(), st.integers()))
def test_any_other_name_is_the_registrys_unknown_platform(name):
    if name in all_platforms.PLATFORMS or name in all_platforms.ALIASES:
        return
    with pytest.raises(all_platforms.UnknownPlatform) as full:
        all_platforms.load(name)
    with pytest.raises(lean_registry.UnknownPlatform) as lean:
        lean_registry.load(name)
    assert str(lean.value) == str(full.value)


PROBE = """
import json, sys
from vacant.platforms import lean_registry
from vacant.core import platform_facts
lean_registry.load(sys.argv[1])
print(json.dumps({"paths": platform_facts.settings_paths(), "providers": platform_facts.PROVIDERS,
                  "platforms": sorted(m for m in sys.modules if m.startswith("vacant.platforms."))}))
"""


@pytest.mark.parametrize("name", ["claude", "codex", "gemini"])
def test_a_process_with_the_lean_registry_only_guards_every_platforms_settings(name):
    out = json.loads(subprocess.run([sys.executable, "-I", "-c", PROBE, name], capture_output=True, text=True,
                                    check=True).stdout)
    every_workspace = {rel for p in all_platforms.REGISTERED for rel in p.settings_in_workspace}
    every_home = {rel for p in all_platforms.REGISTERED for rel in p.settings_in_home}
    assert set(out["paths"][0]) == every_workspace and set(out["paths"][1]) == every_home
    assert out["providers"] == {p.cell_platform: p.provider for p in all_platforms.REGISTERED if p.provider}
    module = type(all_platforms.load(name)).__module__
    assert module in out["platforms"]
    others = {type(p).__module__ for p in all_platforms.REGISTERED} - {module}
    assert not others & set(out["platforms"]), f"{name} loaded other platforms: {sorted(others & set(out['platforms']))}"
