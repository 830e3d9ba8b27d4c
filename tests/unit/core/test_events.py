"""The closed vocabulary: doc drift, unknown types and missing fields raise, emission both ways."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vacant.core import events
from vacant.store.steplog import StepLog

PACKAGE = Path(events.__file__).resolve().parents[1]
EMIT = re.compile(r"""\.emit\(\s*(?P<arg>[^,\)]+)""")


def emission_sites() -> list[tuple[Path, str]]:
    sites = []
    for path in PACKAGE.rglob("*.py"):
        for match in EMIT.finditer(path.read_text()):
            sites.append((path, match.group("arg").strip()))
    return sites


def test_every_emission_site_names_a_legal_literal_type():
    sites = emission_sites()
    assert sites, "no emission sites found: the scan itself is broken"
    for path, arg in sites:
        if arg == "event_type" and path.name == "steplog.py":
            continue  # StepLog.emit's own signature
        assert re.fullmatch(r'"[a-z_]+"', arg), f"{path}: emit({arg}) must name its type as a literal"
        assert arg.strip('"') in events.TYPES, f"{path}: emit({arg}) is not in the vocabulary"


def test_every_type_has_a_real_emission_site():
    emitted = {arg.strip('"') for _, arg in emission_sites()}
    assert set(events.TYPES) - emitted == set()


def test_unknown_type_and_missing_field_raise(tmp_path):
    log = StepLog(tmp_path / "run")
    with pytest.raises(events.VocabularyError, match="unknown event type"):
        log.emit("step_started", step=1)
    with pytest.raises(events.VocabularyError, match="lacks required field"):
        log.emit("step_end", step=1, key="k")
    with pytest.raises(events.VocabularyError, match="envelope"):
        log.emit("run_end", reason="x", seq=4)
    assert not log.path.exists()


def test_load_and_tally(tmp_path):
    log = StepLog(tmp_path / "run")
    log.emit("stop", agent_id=None, stop_hook_active=False)
    log.emit("run_end", reason="other")
    log.emit("run_end", reason="again")
    records = events.load(log.path)
    counts = events.tally(records)
    assert counts["run_end"] == 2 and counts["stop"] == 1 and counts["step_start"] == 0
    assert list(counts) == list(events.TYPES)
