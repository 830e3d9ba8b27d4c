"""What a hook takes from its environment, and what it ignores. Stdlib only (hot path).

A hook's environment is not the person's: Claude Code passes its settings' `env` block to every
hook and reloads it mid-session, and the agent can rewrite that block with one Bash call. So the
hook (in-process, the lean client, the daemon for each forwarded call) drops every `VACANT_*` and
`PYTHON*` variable before anything reads one, except the few below, each honoured only in a way
that cannot open the gate:

- `VACANT_HOME` (and `XDG_DATA_HOME`, `HOME`): where the person's data lives (the install registry,
  a non-git workspace's state). A locator: pointing it elsewhere never makes an installed workspace
  "not installed" while the workspace's own install record is in place, and with the wall the
  settings that could set it are read-only.
- `VACANT_HOOK_BUDGET_S`: a *shorter* whole-call deadline only (never above the platform-safe
  ceiling; a value that is not a positive number is ignored). A shorter deadline only denies more.
- `VACANT_DAEMON_IDLE_S`: how long an idle daemon lives (a number, else the default).
- `VACANT_DO`: honoured only when it names a live `vacant do` process that is an ancestor of the
  hook and that left its marker in the state directory (`do_verified`): a settings `env` block
  with `VACANT_DO=1` does not turn Stop off.

`VACANT_STATE_DIR` is never read by a hook: the install registry (vacant/core/locations.py)
records the state directory the person chose at install, and the hook uses that one.
"""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    from collections.abc import MutableMapping
    from vacant.core.docgen import GeneratedDoc

# The variables a hook honours, each with why it is safe to (docs/HOOK.md is generated from this).
HONOURED_WHY = {
    "VACANT_HOME": "where the person's data lives (the install registry, a non-git workspace's state). A locator: "
                   "while the workspace's install record is in place, pointing it elsewhere neither uninstalls "
                   "the workspace nor opens the gate. Limit without the wall: an agent that rewrites the settings' "
                   "`env` block *and* deletes install.json can hide a registry kept outside the default location.",
    "VACANT_HOOK_BUDGET_S": "a shorter whole-call deadline only (never above 40 s for a tool call, 570 s at Stop); "
                            "anything but a positive number is ignored. A shorter deadline only denies more.",
    "VACANT_DAEMON_IDLE_S": "how long an idle daemon lives (a number, else the default): it never changes an answer.",
    "VACANT_DO": "honoured only when it names a live `vacant do` that is an ancestor of the hook process and left "
                 "its marker (its start time) in the state directory: `VACANT_DO=1` in a settings `env` block does "
                 "not turn Stop off.",
    "VACANT_CLIENT_CWD": "the lean client's own working directory, always overwritten by the client before it "
                         "forwards a call to the daemon.",
}
HONOURED = tuple(HONOURED_WHY)
DROPPED_PREFIXES = ("VACANT_", "PYTHON")
# the shared dynamic loader reads these before any Python runs: vacant cannot undo them, only
# refuse to hand them on to what it starts (the daemon, checks)
LOADER = ("LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT")
DO_ENV = "VACANT_DO"
PEER_PID_ENV = "VACANT_PEER_PID"  # set by the daemon from SO_PEERCRED, never taken from a request
BUDGET_ENV = "VACANT_HOOK_BUDGET_S"
DO_MARKERS = "do"
MAX_ANCESTORS = 64


def scrub(environ: MutableMapping[str, str]) -> list[str]:
    """Drop, in place, every variable a hook must not take from its environment; the names dropped."""
    dropped = [name for name in list(environ)
               if name.startswith(DROPPED_PREFIXES) and name not in HONOURED or name == PEER_PID_ENV]
    for name in dropped:
        del environ[name]
    return dropped


def for_child(environ: MutableMapping[str, str]) -> dict[str, str]:
    """The environment for an interpreter vacant starts (the daemon): scrubbed, no loader variables."""
    env = dict(environ)
    scrub(env)
    for name in LOADER:
        env.pop(name, None)
    return env


def budget(environ: MutableMapping[str, str], ceiling: float) -> float:
    """The whole-call deadline in seconds: `ceiling`, or a shorter one the environment asks for."""
    try:
        asked = float(environ.get(BUDGET_ENV, ""))
    except ValueError:
        return ceiling
    return min(ceiling, asked) if asked == asked and asked > 0 else ceiling  # NaN, 0, negatives: ignored


# -- `vacant do`: the one variable that turns something off, so it must be proven --------------


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/<pid>/stat after the command name (field 3 onward), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read(4096).decode("ascii", "replace")
    except OSError:
        return None
    return text.rpartition(")")[2].split()


def start_time(pid: int) -> str | None:
    fields = _stat_fields(pid)
    return fields[19] if fields and len(fields) > 19 else None


def ancestors(pid: int) -> list[int]:
    """`pid`'s parent, grandparent, ... up to init (bounded)."""
    found: list[int] = []
    while len(found) < MAX_ANCESTORS:
        fields = _stat_fields(pid)
        if not fields or len(fields) < 2:
            break
        try:
            pid = int(fields[1])
        except ValueError:
            break
        if pid <= 0:
            break
        found.append(pid)
        if pid == 1:
            break
    return found


def do_marker(state: Path, pid: int) -> Path:
    return Path(state) / DO_MARKERS / str(pid)


def mark_do(state: Path) -> str:
    """`vacant do`'s side: leave the marker for this process and return the value for VACANT_DO."""
    pid = os.getpid()
    path = do_marker(state, pid)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.write_text(start_time(pid) or "")
    return str(pid)


def unmark_do(state: Path) -> None:
    try:
        do_marker(state, os.getpid()).unlink()
    except OSError:
        pass


def do_verified(value: str | None, state: Path, hook_pid: int) -> bool:
    """VACANT_DO names a live `vacant do` (its marker in the state directory, the same process by
    its start time) that is an ancestor of the hook process."""
    if not value:
        return False
    try:
        pid = int(value)
    except ValueError:
        return False
    if pid <= 1 or pid not in ancestors(hook_pid):
        return False
    try:
        marked = do_marker(state, pid).read_text()
    except OSError:
        return False
    return bool(marked) and marked == start_time(pid)


def render_doc() -> str:
    rows = "\n".join(f"| `{name}` | {why} |" for name, why in HONOURED_WHY.items())
    return f"""# What a hook takes from its environment

{_doc().header()}

A hook's environment is not the person's: Claude Code hands its settings' `env` block to every
hook (and reloads it mid-session), and an agent can rewrite that block with one Bash call. So
every hook (the in-process hook, the lean client, the daemon for each forwarded call) drops every
`VACANT_*` and `PYTHON*` variable before anything reads one, and starts every interpreter of its
own isolated (`python -I`, with `LD_PRELOAD`/`LD_LIBRARY_PATH`/`LD_AUDIT` removed), except:

| variable | why honouring it cannot open the gate |
|---|---|
{rows}

`VACANT_STATE_DIR` is for the person's own commands: a hook never reads it. The install registry
(`<user data dir>/installs/ws-<hash>.json`, written at every install) records the state directory
chosen then, and the hook uses that one.

Limits: the dynamic loader reads `LD_PRELOAD` before any Python runs, so a hook cannot undo it
(the wall keeps the settings read-only). The HTTP hooks' token stays in
`.claude/settings.local.json` (0600): Claude can take a header value from an environment variable
only from its own environment or the settings' `env` block, and the agent's Bash commands inherit
Claude's environment, so moving it there would hide it from nobody; the wall keeps the agent
from reading the settings and the daemon's state instead.
"""


def _doc() -> GeneratedDoc:
    from vacant.core.docgen import GeneratedDoc  # docs only: never on the hook's path

    return GeneratedDoc("HOOK.md", render_doc, ("vacant/core/trustenv.py",))
