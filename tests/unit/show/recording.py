"""A run recorded in-process through the real recorder, the way a hook process drives it (one
fresh Recorder per hook call): tool steps that write files, shell steps, out-of-band edits."""

from __future__ import annotations

from pathlib import Path
from typing import Callable


from vacant.platforms.base import HookCall
from vacant.platforms.claude import PLATFORM
from vacant.recorder import Recorder


class Recording:
    def __init__(self, root: Path, session: str = "s1") -> None:
        self.root, self.session, self.calls = Path(root), session, 0
        self.call("session_start", source="startup")

    def call(self, kind: str, **fields) -> None:
        Recorder(self.root, self.session, PLATFORM).handle(HookCall(kind, self.session, self.root, **fields))

    def step(self, tool: str, act: Callable[[], None], scope: list[str] | None, agent_id: str | None = None,
             tool_input: object = None) -> None:
        """One tool step: Pre, the act (the tool's effect on disk), Post."""
        self.calls += 1
        key = f"toolu_{self.calls:04d}"
        fields = dict(tool=tool, key=key, scope=scope, agent_id=agent_id, tool_input=tool_input or {"n": self.calls})
        self.call("tool_pre", **fields)
        act()
        self.call("tool_post", outcome="ok", **fields)

    def write(self, rel: str, text: str | bytes, agent_id: str | None = None) -> None:
        path = self.root / rel

        def act() -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text if isinstance(text, bytes) else text.encode())
        self.step("Write", act, [str(path)], agent_id, {"file_path": str(path)})

    def bash(self, act: Callable[[], None], command: str = "sh -c …") -> None:
        self.step("Bash", act, None, tool_input={"command": command})

    def end(self) -> None:
        self.call("session_end", reason="other")

    @property
    def run_dir(self) -> Path:
        return self.root / ".vacant" / "runs" / self.session


def cli(args: list[str], cwd: Path) -> "subprocess.CompletedProcess[str]":
    """The installed `vacant` command (beside this interpreter), run in `cwd`."""
    import subprocess
    import sys

    return subprocess.run([str(Path(sys.executable).parent / "vacant"), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)
