"""Recorded runs from a list of steps, through the real recorder: each step writes (or removes)
files, as a Write when it is one file and a Bash step (a full scan) otherwise. A Bash step's
recorded command is a real shell command making exactly its writes, so the Stop's re-run of it
(vacant/attribute/rerun.py) writes them again. Used by the per-test attribution tests
(tests/unit/attribute/).

`Session` plays richer histories: shell steps whose command really runs between the step's
PreToolUse and PostToolUse (with what another writer does while it runs, before or after the
command's own effect), and Write and Edit steps (another writer after the tool's own write)."""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path

from vacant.core.calls import HookCall
from vacant.platforms.claude import PLATFORM
from vacant.record.recorder import Recorder

Step = dict[str, "str | None"]  # path -> new text, or None to remove it
During = Callable[[], None]  # another writer's doing while a step runs


def shell_command(files: Step) -> str:
    """A shell command that makes exactly these writes (what a re-run at Stop does again)."""
    parts: list[str] = []
    for rel, text in sorted(files.items()):
        if text is None:
            parts.append(f"rm -f {shlex.quote(rel)}")
            continue
        if os.path.dirname(rel):
            parts.append(f"mkdir -p {shlex.quote(os.path.dirname(rel))}")
        parts.append(f"printf %s {shlex.quote(text)} > {shlex.quote(rel)}")
    return " && ".join(parts) or "true"


def write_files(root: Path, files: Step) -> None:
    for rel, content in files.items():
        target = root / rel
        if content is None:
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)


def record_steps(root: Path, steps: list[Step], session: str = "steps") -> Path:
    """Play `steps` on the workspace at `root` (its baseline already there); the run's directory."""
    recorder = Recorder(root, session, PLATFORM)
    recorder.handle(HookCall("session_start", session, root, source="startup"))
    for number, files in enumerate(steps, start=1):
        key = f"toolu_{number:03d}"
        [(path, text)] = files.items() if len(files) == 1 else [(None, None)]
        if path is not None and text is not None:
            tool, scope, tool_input = "Write", [str(root / path)], {"file_path": str(root / path), "content": text}
        else:
            tool, scope, tool_input = "Bash", None, {"command": shell_command(files)}
        recorder.handle(HookCall("tool_pre", session, root, tool=tool, key=key, scope=scope, tool_input=tool_input,
                                 cwd=str(root)))
        write_files(root, files)
        recorder.handle(HookCall("tool_post", session, root, tool=tool, key=key, scope=scope, tool_input=tool_input,
                                 outcome="ok", exit_code=0 if tool == "Bash" else None, cwd=str(root)))
    return recorder.log.run_dir


class Session:
    """One Claude session recorded step by step through the real recorder (its PLATFORM)."""

    def __init__(self, root: Path, session: str = "steps", beside: "Session | None" = None) -> None:
        """`beside`: another session in the same workspace; both scan through one scanner, as the
        workspace's daemon serves every session (each hook call without it loads the index afresh)."""
        self.root, self.session = root, session
        self.recorder = Recorder(root, session, PLATFORM, scanner=beside.recorder.scanner if beside else None)
        self.recorder.handle(HookCall("session_start", session, root, source="startup"))
        self.steps = 0  # tool calls made (step numbers also count out-of-band change sets)

    @property
    def run_dir(self) -> Path:
        return self.recorder.log.run_dir

    def _call(self, kind: str, tool: str, tool_input: dict, scope: list[str] | None, **post: object) -> None:
        self.recorder.handle(HookCall(kind, self.session, self.root, tool=tool, key=f"toolu_{self.steps:03d}",
                                      scope=scope, tool_input=tool_input, cwd=str(self.root), **post))

    def shell(self, command: str, during: During | None = None, before: During | None = None) -> int:
        """A Bash step: `command` runs for real in the workspace; `before` runs before it and
        `during` after it, both before the step's PostToolUse. Returns the command's exit code."""
        self.steps += 1
        tool_input = {"command": command}
        self._call("tool_pre", "Bash", tool_input, None)
        if before is not None:
            before()
        code = subprocess.run(["bash", "-c", command], cwd=self.root, stdin=subprocess.DEVNULL,
                              capture_output=True).returncode
        if during is not None:
            during()
        self._call("tool_post", "Bash", tool_input, None, outcome="ok" if code == 0 else "failed", exit_code=code)
        return code

    def finish(self) -> None:
        """The agent's Stop as the recorder sees it: a last full scan (what changed since the last
        step is out of band), steps left open closed."""
        self.recorder.handle(HookCall("stop", self.session, self.root))

    def write(self, rel: str, text: str, during: During | None = None) -> None:
        """A Write step; `during` runs after the tool's own write, before its PostToolUse."""
        self._tool("Write", rel, {"file_path": str(self.root / rel), "content": text}, lambda: text, during)

    def edit(self, rel: str, old: str, new: str, during: During | None = None) -> None:
        """An Edit step replacing `old` (once) in the file as it is; `during` as for `write`."""
        tool_input = {"file_path": str(self.root / rel), "old_string": old, "new_string": new}
        self._tool("Edit", rel, tool_input, lambda: (self.root / rel).read_text().replace(old, new, 1), during)

    def tool_call(self, tool: str, tool_input: dict, scope: list[str] | None, effect: During,
                  exit_code: int | None = None) -> None:
        """Any tool call whose effect on the workspace the test makes itself (`effect`)."""
        self.steps += 1
        self._call("tool_pre", tool, tool_input, scope)
        effect()
        self._call("tool_post", tool, tool_input, scope, outcome="ok", exit_code=exit_code)

    def _tool(self, tool: str, rel: str, tool_input: dict, result: Callable[[], str], during: During | None) -> None:
        self.steps += 1
        scope = [str(self.root / rel)]
        self._call("tool_pre", tool, tool_input, scope)
        write_files(self.root, {rel: result()})
        if during is not None:
            during()
        self._call("tool_post", tool, tool_input, scope, outcome="ok")
