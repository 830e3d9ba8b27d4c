"""A run recorded in-process through the real recorder, the way a hook process drives it (one
fresh Recorder per hook call): tool steps that write files, shell steps, out-of-band edits."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from vacant.core.calls import HookCall, Read
from vacant.core.locations import state_dir
from vacant.hook.call import start_probe, stop_pipeline
from vacant.platforms.claude import PLATFORM
from vacant.record.recorder import Recorder


class Recording:
    def __init__(self, root: Path, session: str = "s1") -> None:
        self.root, self.session, self.calls = Path(root), session, 0
        self.call("session_start", source="startup")

    def call(self, kind: str, **fields) -> None:
        call = HookCall(kind, self.session, self.root, **fields)
        recorder = Recorder(self.root, self.session, PLATFORM, start_probe=start_probe)  # as the hook call wires it
        recorder.handle(call)
        if kind in ("stop", "subagent_stop"):  # as the hook entry does, outside the recorder's lock
            stop_pipeline(recorder, call)

    def step(self, tool: str, act: Callable[[], None], scope: list[str] | None, agent_id: str | None = None,
             tool_input: object = None, reads: list[Read] | None = None) -> None:
        """One tool step: Pre, the act (the tool's effect on disk), Post (with what it read)."""
        self.calls += 1
        key = f"toolu_{self.calls:04d}"
        fields = dict(tool=tool, key=key, scope=scope, agent_id=agent_id, tool_input=tool_input or {"n": self.calls})
        self.call("tool_pre", **fields)
        act()
        self.call("tool_post", outcome="ok", reads=reads or [], **fields)

    def read(self, rel: str) -> None:
        path = self.root / rel
        self.step("Read", lambda: None, [], tool_input={"file_path": str(path)},
                  reads=[Read("file", str(path), path.read_bytes())])

    def stop(self) -> None:
        """The main agent's Stop: the real pipeline runs (checks, replay, grade, report)."""
        self.call("stop")

    def write(self, rel: str, text: str | bytes, agent_id: str | None = None) -> None:
        path = self.root / rel

        def act() -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text if isinstance(text, bytes) else text.encode())
        content = text if isinstance(text, str) else text.decode("utf-8", "surrogateescape")
        self.step("Write", act, [str(path)], agent_id, {"file_path": str(path), "content": content})

    def bash(self, act: Callable[[], None], command: str = "sh -c …") -> None:
        self.step("Bash", act, None, tool_input={"command": command})

    def end(self) -> None:
        self.call("session_end", reason="other")

    @property
    def run_dir(self) -> Path:
        return state_dir(self.root) / "runs" / self.session


def cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The installed `vacant` command (beside this interpreter), run in `cwd`."""
    return subprocess.run([str(Path(sys.executable).parent / "vacant"), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, check=False)


CHECK_VALUE = Path(__file__).resolve().parents[3] / "fixtures" / "scenarios" / "check_value.py"
CONTRACT = """task_family = "config"

[stop]
rounds = 1

[[check]]
name = "rate"
command = "python3 check_value.py RATE config.py 0.08"
"""
HOSTILE = "</script><img src=x onerror=\"document.title='pwned'\">.txt"


def planted_run(ws: Path, filler: int = 0) -> Recording:
    """A run with a planted error: step 2 writes RATE = 0.5 (the check wants 0.08) into config.py;
    a shell step makes a file whose name and content are markup; `filler` more edit steps follow."""
    (ws / "vacant.toml").write_text(CONTRACT)
    (ws / "check_value.py").write_bytes(CHECK_VALUE.read_bytes())
    (ws / "notes.txt").write_text("the rate is 0.08\n")
    run = Recording(ws)
    run.read("notes.txt")
    run.write("config.py", "# settings\nNAME = 'demo'\nRATE = 0.5\nDEBUG = False\n")
    def hostile() -> None:  # a path holding `</script>`: a directory `<` and a file `script>…`
        (ws / HOSTILE).parent.mkdir(exist_ok=True)
        (ws / HOSTILE).write_text("<b>bold</b></script><script>document.title='pwned'</script>\n")
    run.bash(hostile, command=f"echo '<b>bold</b>' > '{HOSTILE}'")
    for number in range(filler):
        run.write(f"filler/f{number % 50}.txt", f"filler {number}\n" * (1 + number % 5))
    run.stop()
    return run
