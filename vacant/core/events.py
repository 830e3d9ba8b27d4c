"""The closed vocabulary of step-log events: the single source for types, fields and meanings.

`python -m vacant.gendocs --write` regenerates docs/EVENTS.md.
"""

from __future__ import annotations

from vacant.core import leanjson as json  # not `import json`: 13 ms CPU of each hook call (vacant/hook/lean.py)
from pathlib import Path
from vacant.core.leanstd import namedtuple

TYPE_CHECKING = False  # typing's, without importing typing: that costs each hook call 15 ms CPU (hook/lean.py)
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from vacant.core.docgen import GeneratedDoc

# (required field names, one-line meaning); a namedtuple keeps `typing` off the hot path
EventType = namedtuple("EventType", "required meaning")


# Every record also carries the envelope fields below; they are added by the step log.
ENVELOPE = ("v", "seq", "ts", "type", "prev", "hash")

TYPES: dict[str, EventType] = {
    "run_start": EventType(
        ("run", "platform", "workspace", "source", "baseline"),
        "A run began; `baseline` is the object key of the full workspace manifest (state_0); "
        "`commit` (optional) is the git HEAD it started from.",
    ),
    "step_start": EventType(
        ("step", "key", "tool", "input", "actor", "open_steps"),
        "A tool call began (or an out-of-band change set was found: tool `oob`, actor null); `kind` (optional) is "
        "the tool's kind (shell, write, edit, patch, notebook, read), and for shell, write, edit and patch `intent` "
        "holds the platform's canonical input (the command, the file's content, the edits, the patch) and `cwd` "
        "where it ran (relative to the workspace): what the Stop checks the step's change against.",
    ),
    "step_end": EventType(
        ("step", "key", "outcome"),
        "A step finished with an outcome: ok, failed, not-run, or unknown (never reported: closed at Stop or run end); "
        "`reconciled: transcript` when no hook saw the step and Stop found it in the agent's transcript; "
        "`ran_by: vacant` when vacant's hook ran the step itself, outside the platform's wall, as the person "
        "approved (`ask` names the approval; the platform was told not to run it).",
    ),
    "change": EventType(
        ("step", "scope", "added", "changed", "removed", "open_steps"),
        "A manifest delta seen by a scan; `step` owns it, `open_steps` lists every step open then.",
    ),
    "read": EventType(
        ("origin", "ref", "object", "step"),
        "An input the agent observed (file, command, url, prompt, subagent, search); content kept.",
    ),
    "subagent": EventType(
        ("agent_id", "agent_type", "phase"),
        "A sub-agent started or stopped (its last message is recorded as a read).",
    ),
    "actor": EventType(
        ("agent_id", "agent_definition", "model"),
        "The model behind an agent (main or a sub-agent) became known, e.g. from the transcript.",
    ),
    "report_saved": EventType(
        ("stop", "sha256"),
        "The Stop pipeline saved its report (`reports/<stop>.json`, and `report.json` as the latest): its "
        "sha256, so `vacant verify` and `vacant report` notice a report edited behind vacant's back.",
    ),
    "stop": EventType(
        ("agent_id", "stop_hook_active"),
        "The agent (or a sub-agent) asked to stop; the Stop pipeline runs here.",
    ),
    "check": EventType(
        ("name", "passed", "exit_code", "seconds", "state"),
        "A contract check or guard ran at Stop on a reconstructed state (state index in the run's timeline).",
    ),
    "contract_error": EventType(
        ("path", "line", "key", "message"),
        "vacant.toml could not be read at Stop (`line`, `key`: where, when known): nothing was verified, and the "
        "Stop blocked (or, with no round left, told the person).",
    ),
    "finding": EventType(
        ("id", "source", "name", "path", "line"),
        "A failing thing on the final state: a check failure or a standing human flag (stable id).",
    ),
    "flip": EventType(
        ("finding", "step", "state", "method"),
        "Replay found where a finding appeared: absent on the state before, present after.",
    ),
    "attribution": EventType(
        ("finding", "level", "step", "lineage_source"),
        "How sure the attribution of a finding is (a level from docs/LEVELS.md) and to which step.",
    ),
    "feedback": EventType(
        ("text", "round", "rounds"),
        "What the agent was told to fix at Stop (never who it is), and the round it used.",
    ),
    "review": EventType(
        ("cell", "score", "weight", "finding"),
        "A reputation review recorded for an agent cell (0: introduced a finding, 1: a green Stop).",
    ),
    "gap": EventType(
        ("finding", "platform"),
        "A finding came from an out-of-band change: counted under integration coverage, nobody blamed.",
    ),
    "round": EventType(
        ("round", "command", "exit_code", "decision"),
        "`vacant do`: one agent round ended (its steps are those since the previous round); decision "
        "is continue (feedback sent), green, nothing_to_verify, budget_spent, cannot_continue, agent_failed "
        "or interrupted; `walled` says whether the round ran behind vacant's wall.",
    ),
    "pause_surfaced": EventType(
        ("ask", "step", "key", "status", "code", "receipts"),
        "The gate held back an ACT action (step `step`, not run) and asked a person: card `ask`, code "
        "NEEDS_CONFIRM or APPROVAL_STALE; `receipts` say what would run, where, and what it may change.",
    ),
    "human_decided": EventType(
        ("ask", "decision", "signature"),
        "The person answered card `ask` from their shell (approved or declined), signed with their key; "
        "an approval lets the same action (normal form and working directory) pass exactly once.",
    ),
    "rescan": EventType(
        ("why", "files", "seconds"),
        "The watch daemon could not trust its record of what changed (it just started, the kernel queue "
        "overflowed, a watch limit was hit, events could not be placed) and scanned the whole workspace; "
        "whatever that scan found is in the `change` records that follow.",
    ),
    "hooks_missing": EventType(
        ("platform", "path"),
        "The settings file `vacant init` installed the platform's hooks in no longer holds them (deleted or "
        "cleaned mid-run); recorded once per run, and the person is told.",
    ),
    "record_problem": EventType(
        ("kind", "detail"),
        "Something in vacant's own record was found missing or altered (a flag removed or edited, a spent "
        "approval's record gone, dangling steps closed at Stop); reported to the person at Stop.",
    ),
    "run_end": EventType(
        ("reason",),
        "The run ended (session end); open steps were closed by a final scan.",
    ),
}


class VocabularyError(ValueError):
    """An event of an unknown type, or missing a required field."""


def make(event_type: str, fields: dict[str, object]) -> dict[str, object]:
    """Validate one event and return its record body (without the envelope's chain fields)."""
    spec = TYPES.get(event_type)
    if spec is None:
        raise VocabularyError(f"unknown event type {event_type!r}; legal: {', '.join(TYPES)}")
    missing = [name for name in spec.required if name not in fields]
    if missing:
        raise VocabularyError(f"event {event_type!r} lacks required field(s): {', '.join(missing)}")
    clash = [name for name in fields if name in ENVELOPE]
    if clash:
        raise VocabularyError(f"event {event_type!r} sets envelope field(s): {', '.join(clash)}")
    return {"type": event_type, **fields}


def iter_lines(path: Path) -> Iterator[tuple[int, bytes, dict[str, object] | None]]:
    """Yield (line number, raw bytes, parsed record or None when the line is torn/unparseable)."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                record = json.loads(raw) if raw.endswith(b"\n") else None
            except ValueError:
                record = None
            if not isinstance(record, dict):
                record = None
            yield number, raw, record


def load(path: str | Path) -> list[dict[str, object]]:
    """Every readable record of a step log, in order; torn lines are skipped with a warning."""
    records = []
    for number, _raw, record in iter_lines(Path(path)):
        if record is None:
            import warnings  # only for a torn log (not on the hook path)

            warnings.warn(f"{path}:{number}: torn or unreadable record skipped", stacklevel=2)
            continue
        records.append(record)
    return records


def tally(records: Iterable[dict[str, object]]) -> dict[str, int]:
    """How many records of each type, in vocabulary order (zero counts included)."""
    counts = dict.fromkeys(TYPES, 0)
    for record in records:
        kind = record.get("type")
        if kind in counts:
            counts[kind] += 1
    return counts



def render_doc() -> str:
    lines = [
        "# Step-log events",
        "",
        _doc().header(),
        "",
        "Every record carries the envelope: " + ", ".join(f"`{name}`" for name in ENVELOPE) + ".",
        "`prev` is the `hash` of the record before it (a hash chain); `vacant verify` checks it.",
        "",
        "| type | required fields | meaning |",
        "|---|---|---|",
    ]
    for name, spec in TYPES.items():
        fields = ", ".join(f"`{field}`" for field in spec.required)
        lines.append(f"| `{name}` | {fields} | {spec.meaning} |")
    return "\n".join(lines) + "\n"


def _doc() -> GeneratedDoc:
    from vacant.core.docgen import GeneratedDoc  # docs only: never on the hook's path (it resolves the docs directory)

    return GeneratedDoc('EVENTS.md', render_doc, ("vacant/core/events.py",))
