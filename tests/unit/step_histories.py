"""Recorded runs from a list of steps, through the real recorder: each step writes (or removes)
files, as a Write when it is one file and a Bash step (a full scan) otherwise. Used by the
per-test attribution tests (tests/unit/attribute/)."""

from __future__ import annotations

from pathlib import Path

from vacant.core.calls import HookCall
from vacant.platforms.claude import PLATFORM
from vacant.record.recorder import Recorder

Step = dict[str, "str | None"]  # path -> new text, or None to remove it


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
            tool, scope, tool_input = "Bash", None, {"command": f"step {number}: " + " ".join(sorted(files))}
        recorder.handle(HookCall("tool_pre", session, root, tool=tool, key=key, scope=scope, tool_input=tool_input))
        for rel, content in files.items():
            target = root / rel
            if content is None:
                target.unlink(missing_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(content)
        recorder.handle(HookCall("tool_post", session, root, tool=tool, key=key, scope=scope, tool_input=tool_input,
                                 outcome="ok", exit_code=0 if tool == "Bash" else None))
    return recorder.log.run_dir
