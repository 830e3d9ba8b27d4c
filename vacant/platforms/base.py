"""The boundary every agent platform implements, and the normalised call the core consumes.

One module per platform under `vacant/platforms/` (the way pre-commit keeps one module per
language) exposes a `PLATFORM` object satisfying `Platform` (vacant/platforms/protocol.py, which
the type checker holds each registered platform to), listed in `all_platforms.py`. The core never
asks which platform it serves: it gets a `HookCall` and returns a `Response`. Stdlib only (hot
path): the protocol's types are named here for the checker only.
"""

from __future__ import annotations


from vacant.core.leanstd import namedtuple
from vacant.core.calls import HookCall, Response
from vacant.core.safeio import read_capped

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hook path
if TYPE_CHECKING:
    from collections.abc import Mapping

    from vacant.platforms.capabilities import HookRuns, Settled, Unheard, Unhooked
    from vacant.platforms.driver import Driver

# One line of `vacant doctor`: status ok | warn | fail. Only a fail (a broken install: hooks that
# will not run, or not there at all) makes doctor exit non-zero; a warn is advice.
Diagnosis = namedtuple("Diagnosis", "name status detail")
STATUSES = ("ok", "warn", "fail")


def diagnosis(name: str, ok: bool, detail: str) -> Diagnosis:
    return Diagnosis(name, "ok" if ok else "fail", detail)


def advice(name: str, detail: str) -> Diagnosis:
    return Diagnosis(name, "warn", detail)

MAX_READ_BYTES = 32 * 1024 * 1024


def read_file_bytes(path: str) -> bytes | None:
    """A file's bytes as a read's content (None when gone, unreadable, or too big to keep)."""
    try:
        return read_capped(path, MAX_READ_BYTES)  # never a FIFO's or a device's "content"
    except (OSError, TypeError, ValueError):
        return None


def edit_intent(path: object, old: object, new: object, replace_all: object) -> dict[str, object]:
    return {"path": path, "edits": [{"old_string": old, "new_string": new, "replace_all": bool(replace_all)}]}


def render_hook_json(call: HookCall, response: Response) -> tuple[str, int]:
    """The JSON-on-stdout contract Claude Code and Codex share: a PreToolUse deny, a Stop block,
    a message for the person; an allow is empty output. Always exit 0 (exit 2 would prefix the
    hook's command line to what the model sees)."""
    from vacant.core import leanjson as json  # json without `import json` (hot path)

    out: dict[str, object] = {}
    if response.action == "deny" and call.kind == "tool_pre":
        out["hookSpecificOutput"] = {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": response.reason,
        }
    elif response.action == "block" and call.kind in ("stop", "subagent_stop"):
        out = {"decision": "block", "reason": response.reason}
    if response.system_message:
        out["systemMessage"] = response.system_message
    return (json.dumps(out) if out else ""), 0


class PlatformBase:
    """The protocol's facts with their defaults: every platform class derives from it, so a member
    it does not set is declared here (never read with getattr). Plain class attributes only
    (the hook's hot path imports this module)."""

    name = ""  # what `vacant-hook NAME` and `--platform NAME` say
    cell_platform = ""  # the platform part of an actor cell (and of a run's `platform`)
    aliases: tuple[str, ...] = ()  # other names `--platform` takes
    program: str | None = None  # the executable `vacant do --platform auto` recognises (None: never guessed)
    provider: str | None = None  # the model provider in the GenAI conventions' naming (None: the platform's own name)
    event_key = "hook_event_name"  # the payload field that names the event
    events: dict[str, str] = {}  # noqa: RUF012 - never mutated; the platform's event names -> HookCall kinds (vacant/core/calls.py)
    hook_env: tuple[str, ...] = ()  # prefixes of the environment variables its hooks read (the lean client forwards them)
    project_dir_env: tuple[str, ...] = ()  # the variables naming the project's root in its hooks' environment, first set wins
    wall_refused: str | None = None  # why `vacant do` cannot wall this platform's commands off from the record (None: it can)
    own_sandbox: str | None = None  # the platform's own sandbox `vacant init` sets up as the wall, in a few words (None: none)
    sandbox_needs_every_package = False  # its own sandbox needs each of the wall's Debian packages, not bubblewrap alone
    settings_in_workspace: tuple[str, ...] = ()  # hook settings files, relative to the workspace (the gate guards them)
    settings_in_home: tuple[str, ...] = ()  # … and relative to the home directory
    scopes: tuple[str, ...] = ()  # where install can put the hooks (`vacant uninstall` looks in each)
    http_hooks = False  # `vacant init --scope local` also writes http hooks to the workspace daemon
    stop_rounds: int | None = None  # feedback rounds its Stop can carry: None = the contract's; 0 = it reports only
    driver: type[Driver] | None = None  # the `vacant do` driver class (vacant/platforms/driver.py), or None: recorded by watching
    # the optional transcript checks (a method of a platform that has it; None where it has none):
    settled: Settled | None = None  # (call, open ids) -> {id: (outcome, exit code)}: finished, no Post to come
    unhooked: Unhooked | None = None  # (call, known ids) -> [(BatchCall, outcome)]: calls that reached no hook
    unheard: Unheard | None = None  # (call, agent id or None, {id: outcome}) -> [(id, kind)] or None:
    #                                 recorded calls the platform's transcript does not hold (None: it cannot judge)
    # (root) -> None or why not: its wall would break a line the person approved (a push to a remote on
    # disk), so the hook runs that line once outside the wall (vacant/record/unwalled.py); None: never
    hook_runs_approved: HookRuns | None = None

    def project_dir(self, env: Mapping[str, str]) -> str | None:
        """The project's root as the platform's hook environment names it (None: it does not)."""
        return next((env[name] for name in self.project_dir_env if env.get(name)), None)

    def events_of(self, *kinds: str) -> tuple[str, ...]:
        """The platform's own names of the events of these kinds (e.g. "tool_pre")."""
        return tuple(event for event, kind in self.events.items() if kind in kinds)

    def headless(self, binary: str, prompt: str, model: str | None, extra: list[str]) -> list[str] | None:
        """The non-interactive command line `vacant experiment` runs a task with (allowed to edit
        and run commands); None: the platform cannot be run that way."""
        return None
