"""Claude's transcript read back at Stop: a recorded call it does not hold is `call-unheard`, but
only once the transcript has caught up with the hooks (it is written behind them: a turn's last
`tool_use` line and the final text can land after the Stop hook started). The transcripts are
built from the captured line shapes (fixtures/payloads) with generated call ids and final texts;
a writer thread appends the lagging lines while the Stop judges. The oracle: exactly the recorded
calls the finished transcript does not hold are named, and none while it has not caught up."""

from __future__ import annotations

import copy
import json
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vacant.core.calls import HookCall
from vacant.platforms import claude
from vacant.platforms.claude import PLATFORM

CAPTURED = json.loads((Path(__file__).resolve().parents[3] / "fixtures" / "payloads" /
                       "claude-code-transcript_lines.json").read_text())
IDS = st.lists(st.from_regex(r"toolu_[A-Za-z0-9]{4,12}", fullmatch=True), unique=True, max_size=5)


def _tool_use(call_id: str) -> str:
    line = copy.deepcopy(CAPTURED["assistant:tool_use"])
    line["message"]["content"][0]["id"] = call_id
    return json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n"


def _final(text: str) -> str:
    line = copy.deepcopy(CAPTURED["assistant:text"])
    line["message"]["content"] = [{"type": "text", "text": text}]
    return json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n"


def _stop(path: Path, final_text: str | None) -> HookCall:
    payload = {"hook_event_name": "Stop", "session_id": "s", "cwd": str(path.parent), "transcript_path": str(path),
               "stop_hook_active": False, "last_assistant_message": final_text}
    return PLATFORM.parse(payload, {})


def _late_writer(path: Path, lines: list[str], after: float) -> threading.Thread:
    def write() -> None:
        time.sleep(after)
        with path.open("a") as handle:
            for line in lines:
                handle.write(line)
                handle.flush()

    thread = threading.Thread(target=write)
    thread.start()
    return thread


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(present=IDS, lagging=IDS, forged=IDS, final_text=st.text(min_size=1, max_size=40).filter(str.strip),
       after=st.floats(min_value=0.0, max_value=0.3))
def test_only_calls_the_caught_up_transcript_lacks_are_named(tmp_path_factory, present, lagging, forged,
                                                            final_text, after):
    lagging = [key for key in lagging if key not in present]
    forged = [key for key in forged if key not in present and key not in lagging]
    path = tmp_path_factory.mktemp("t") / "session.jsonl"
    path.write_text("".join(_tool_use(key) for key in present))
    writer = _late_writer(path, [*map(_tool_use, lagging), _final(final_text)], after)
    try:
        found = PLATFORM.unheard(_stop(path, final_text), None, dict.fromkeys([*present, *lagging, *forged], "ok"))
    finally:
        writer.join()
    if not present:
        assert found is None or sorted(found) == sorted((key, "call-unheard") for key in forged)
        return  # a transcript with no tool_use yet cannot judge (None), unless the late lines came first
    assert sorted(found) == sorted((key, "call-unheard") for key in forged)


def test_a_transcript_that_never_catches_up_names_nobody(tmp_path, monkeypatch):
    monkeypatch.setattr(claude, "CATCH_UP_S", 0.3)
    path = tmp_path / "session.jsonl"
    path.write_text(_tool_use("toolu_seen"))
    call = _stop(path, "All done.")
    started = time.monotonic()
    assert PLATFORM.unheard(call, None, {"toolu_seen": "ok", "toolu_late": "ok"}) is None
    assert time.monotonic() - started < 2.0
    path.write_text(_tool_use("toolu_seen") + _final("All done."))  # now it has: the call it lacks is named
    assert PLATFORM.unheard(call, None, {"toolu_seen": "ok", "toolu_late": "ok"}) == [("toolu_late", "call-unheard")]
