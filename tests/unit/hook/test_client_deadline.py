"""The client's whole-call deadline (vacant/hook/client.py `ceiling`): a Stop gets the Stop's, a
tool call the tool's, whatever text the tool call carries. A pre-tool call whose payload merely
held a stop event's name (a Bash call described "Stop", a command echoing "agent_end") got the
Stop's 570 s, past the platforms' 60 s hook timeout, after which the tool runs undecided."""

from __future__ import annotations

import json

from hypothesis import example, given, settings
from hypothesis import strategies as st

from vacant.hook import client
from vacant.platforms.all_platforms import PLATFORMS

STOP_NAMES = sorted({mark.decode()[1:-1] for mark in client.STOP_MARKS})
REGISTERED = sorted((name, platform) for name, platform in PLATFORMS.items())


def payload(platform, event: str, **rest: object) -> bytes:
    return json.dumps({platform.event_key: event, "session_id": "s1", **rest}).encode()


def test_every_platforms_stop_gets_the_stops_deadline():
    for name, platform in REGISTERED:
        for event in platform.events_of("stop", "subagent_stop"):
            assert client.ceiling(payload(platform, event), name) == client.STOP_CEILING_S, (name, event)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([p for p in REGISTERED if p[1].events_of("tool_pre")]), st.sampled_from(STOP_NAMES),
       st.sampled_from(["description", "command", "prompt"]))
@example(REGISTERED[0], "Stop", "description")
def test_a_tool_call_naming_a_stop_keeps_the_tools_deadline(registered, stop_name, field):
    name, platform = registered
    for event in platform.events_of("tool_pre"):
        raw = payload(platform, event, tool_name="Bash", tool_input={field: stop_name, "nested": {"x": stop_name}})
        assert stop_name.encode() in raw  # the mark's bytes are there
        assert client.ceiling(raw, name) == client.TOOL_CEILING_S, (name, event, stop_name)


def test_an_unreadable_payload_with_a_mark_is_not_a_stop():
    assert client.ceiling(b'{"hook_event_name": "Stop", ', "claude") == client.TOOL_CEILING_S
