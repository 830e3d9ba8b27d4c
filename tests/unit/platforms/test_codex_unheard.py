"""Codex's rollout read back at Stop: a recorded call it does not hold is `call-unheard`. The
rollouts are built from the captured `item_completed` lines (fixtures/payloads) with generated
call ids; the oracle is the set difference of what was recorded and what the rollout's calls are.
An id that appears only inside a command's output is not a call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.core.calls import HookCall
from vacant.platforms.codex.payloads import rollout_call_ids
from vacant.platforms.codex.platform import PLATFORM

CAPTURED = json.loads((Path(__file__).resolve().parents[3] / "fixtures" / "payloads" / "codex-transcript_items.json")
                      .read_text())["lines"]
IDS = st.lists(st.from_regex(r"call_[a-z0-9_]{1,12}", fullmatch=True), unique=True, max_size=8)


def _rollout(path: Path, calls: list[str], printed: list[str]) -> None:
    lines = []
    for n, call_id in enumerate(calls):
        item = json.loads(json.dumps(CAPTURED[n % len(CAPTURED)]))
        item["payload"]["item"]["id"] = call_id
        lines.append({"type": "response_item", "payload": {"type": "function_call", "call_id": call_id,
                                                           "name": "exec_command", "arguments": "{}"}})
        lines.append(item)
    for text in printed:  # a command that prints an id, quotes and all
        lines.append({"type": "event_msg", "payload": {"type": "item_completed", "item": {
            "type": "CommandExecution", "id": "call_printer", "aggregated_output": json.dumps({"call_id": text})}}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(present=IDS, forged=IDS, printed=IDS)
def test_the_rollout_names_exactly_the_calls_it_does_not_hold(tmp_path_factory, present, forged, printed):
    path = tmp_path_factory.mktemp("r") / "rollout.jsonl"
    _rollout(path, present, printed)
    recorded = {key: "ok" for key in [*present, *forged]}
    call = HookCall("stop", "s", path.parent, transcript_path=str(path))
    found = PLATFORM.unheard(call, None, recorded)
    if not present and not printed:
        assert found is None  # a rollout with no call cannot judge
        return
    held = set(present) | ({"call_printer"} if printed else set())
    assert sorted(found) == sorted((key, "call-unheard") for key in recorded if key not in held)


def test_no_rollout_or_a_huge_one_cannot_judge(tmp_path):
    assert rollout_call_ids(str(tmp_path / "missing.jsonl")) is None
    big = tmp_path / "big.jsonl"
    _rollout(big, ["call_a"], [])
    assert rollout_call_ids(str(big)) == {"call_a"}
    assert rollout_call_ids(str(big), limit=10) is None
    assert PLATFORM.unheard(HookCall("stop", "s", tmp_path, transcript_path=str(big)), "sub", {"x": "ok"}) is None
