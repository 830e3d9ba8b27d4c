"""The normalised hook call the core consumes and the response it returns. Stdlib only (hot path).

Platforms (`vacant/platforms/`) turn a payload into a `HookCall` and render a `Response` in their
own output contract; everything between sees only these types.
"""

from __future__ import annotations

from vacant.core.leanstd import namedtuple

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

# What a hook call means to the core (a closed set).
KINDS = (
    "session_start",
    "prompt",
    "tool_pre",
    "tool_post",
    "tool_batch",
    "change_set",  # changes a watcher saw after the fact (no hooks): one step owning what a scan finds
    "subagent_start",
    "subagent_stop",
    "stop",
    "session_end",
    "ignore",
)

# What a tool call does, as the gate reads it. Each platform maps its own tool names and input
# keys onto one of these kinds and a canonical `intent` (vacant/platforms/*: `intent()`), so the
# core never knows a platform's tool names:
#   shell    {"command": str}
#   patch    {"patch": str}                          (apply_patch text)
#   write    {"path": str, "content": str | None}
#   edit     {"path": str, "edits": [{"old_string", "new_string", "replace_all"}]}
#   notebook {"path": str}                           (writes the file; its result is not predicted)
#   read     {"path": str}
# Any other tool has kind None (a write scope of None still makes the recorder scan everything).
TOOL_KINDS = ("shell", "patch", "write", "edit", "notebook", "read")

# origin: file | command | url | search | subagent | prompt; ref: the path, command, URL, query,
# agent id, or "user"; content: what was observed (str or bytes), or None for a file read whose
# bytes the platform did not give (the recorder takes them from the recorded state before the step).
Read = namedtuple("Read", "origin ref content")
BatchCall = namedtuple("BatchCall", "key tool tool_input response_text")
# What the core wants the platform to do, rendered in the platform's exact output contract.
# action: allow | deny | block.
Response = namedtuple("Response", "action reason system_message", defaults=("allow", "", ""))


class HookCall:
    """One hook call, normalised. `scope` is a tool's write scope: None = it may touch anything
    (full scan); [] = it writes nothing; otherwise the paths it may write."""

    def __init__(self, kind: str, session_id: str, workspace: Path, *, agent_id: str | None = None,
                 agent_type: str | None = None, tool: str | None = None, tool_input: object = None,
                 key: str | None = None, scope: list[str] | tuple[str, ...] | None = (), outcome: str | None = None,
                 exit_code: int | None = None, reads: list[Any] | None = None, batch: list[Any] | None = None,
                 source: str | None = None, transcript_path: str | None = None, model: str | None = None,
                 models: dict[str, str] | None = None, stop_hook_active: bool = False,
                 reason: str | None = None, cwd: str | None = None, tool_kind: str | None = None,
                 intent: dict[str, Any] | None = None, final_text: str | None = None) -> None:
        self.kind = kind
        self.session_id = session_id
        self.workspace = workspace
        self.agent_id = agent_id
        self.agent_type = agent_type
        self.tool = tool
        self.tool_input = tool_input
        self.key = key  # the platform's tool-call id
        self.scope = list(scope) if isinstance(scope, tuple) else scope
        self.outcome = outcome  # ok | failed | not-run
        self.exit_code = exit_code
        self.reads = reads if reads is not None else []
        self.batch = batch if batch is not None else []
        self.source = source  # session_start: startup | resume | compact
        self.transcript_path = transcript_path
        self.model = model
        self.models = models if models is not None else {}  # agent id -> model, when a payload says
        self.stop_hook_active = stop_hook_active
        self.reason = reason
        self.cwd = cwd  # tool calls: the directory the tool runs in (the payload's cwd)
        self.tool_kind = tool_kind  # one of TOOL_KINDS, or None
        self.intent = intent if intent is not None else {}  # the canonical input for tool_kind
        self.final_text = final_text  # Stop / SubagentStop: the agent's last message, when the payload has it
