"""An agent built on the Claude Agent SDK (Python), as a team would write one, with vacant's hooks:

    python sdk_agent.py WORKSPACE CLAUDE_BINARY PROMPT

One `query()` in WORKSPACE, driving the given claude CLI (`cli_path`) with edits and Bash allowed;
the environment (HOME, ANTHROPIC_BASE_URL, the key) is the caller's. Each message the SDK yields
is printed as one JSON line (its type and, for a result, whether it is an error), then `events`:
the hook events the SDK handed to vacant's callbacks, in order, each with the seconds vacant took.

This module holds no tests (tests/e2e/test_sdk.py runs it)."""

from __future__ import annotations

import json
import sys
import time

import anyio
from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

import vacant.sdk


def traced(matchers: dict, seen: list) -> dict:
    """vacant's matchers, each callback noting its event and how long vacant took (what the test counts)."""

    def noting(event, callback):
        async def call(input_data, tool_use_id, context):
            started = time.monotonic()
            try:
                return await callback(input_data, tool_use_id, context)
            finally:
                seen.append((event, round(time.monotonic() - started, 2)))

        return call

    for event, groups in matchers.items():
        for group in groups:
            group.hooks = [noting(event, callback) for callback in group.hooks]
    return matchers


async def main(workspace: str, cli: str, prompt: str) -> None:
    seen: list[tuple[str, float]] = []
    options = ClaudeAgentOptions(cwd=workspace, cli_path=cli, permission_mode="acceptEdits", allowed_tools=["Bash"],
                                 hooks=traced(vacant.sdk.hooks(workspace=workspace), seen))
    async for message in query(prompt=prompt, options=options):
        line = {"type": type(message).__name__}
        if isinstance(message, ResultMessage):
            line.update(is_error=message.is_error, result=message.result)
        print(json.dumps(line), flush=True)
    print(json.dumps({"type": "events", "events": seen}), flush=True)


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:4])
