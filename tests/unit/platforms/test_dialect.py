"""The Claude dialect's shared install and doctor code (vacant/platforms/dialect.py), over every
registered platform that speaks it: a settings file holding JSON that is not an object gets a
failing doctor line naming it (never an exception, which Claude's own doctor raised), and an
uninstall whose saved original is unreadable says so and leaves the settings file as it is."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vacant.platforms import settings_file
from vacant.platforms.all_platforms import REGISTERED
from vacant.platforms.dialect import ClaudeDialect

DIALECT = [p for p in REGISTERED if isinstance(p, ClaudeDialect)]
NOT_OBJECTS = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                           lambda inner: st.lists(inner, max_size=3), max_leaves=5)

pytestmark = pytest.mark.usefixtures("isolated_home")


def test_the_dialect_has_its_four_platforms():
    assert {p.name for p in DIALECT} >= {"claude", "qwen", "gemini", "copilot"}


@pytest.mark.parametrize("platform", DIALECT, ids=lambda p: p.name)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=NOT_OBJECTS)
def test_a_settings_file_that_is_not_an_object_is_a_failing_line_of_doctor(platform, value, tmp_path):
    for scope in platform.scopes:
        path = platform.settings_path(tmp_path, scope)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
        lines = platform.doctor(tmp_path, "vacant-hook " + platform.name)
        assert ("fail" in [line.status for line in lines if line.name == str(path)]), (scope, lines)
        assert json.loads(path.read_text()) == value  # doctor only reads
        path.unlink()


@pytest.mark.parametrize("platform", DIALECT, ids=lambda p: p.name)
def test_an_uninstall_with_an_unreadable_saved_original_keeps_the_file(platform, tmp_path):
    path = platform.settings_path(tmp_path, "project")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}\n")  # nothing of the person's but the file: the uninstall would restore its bytes
    platform.install(tmp_path, "project", "vacant-hook " + platform.name)
    installed = path.read_bytes()
    backup = settings_file._backup_path(path)
    saved = json.loads(backup.read_text())
    backup.write_text(json.dumps({**saved, "original": None}))  # existed, but its text is lost
    with pytest.raises(settings_file.InstallError, match="restore it by hand"):
        platform.uninstall(tmp_path, "project")
    assert path.read_bytes() == installed
