"""The closed list of CLI exit codes: one source, with a generated docs/EXIT_CODES.md.

`python -m vacant.gendocs --write` regenerates docs/EXIT_CODES.md.
"""

from __future__ import annotations

from enum import IntEnum

from vacant.core.docgen import GeneratedDoc


class Exit(IntEnum):
    OK = 0
    FAILED = 1
    USAGE = 2
    USER_ERROR = 3
    NOTHING_TO_VERIFY = 4
    WAITING_ON_PERSON = 5
    INTERNAL = 70
    INTERRUPTED = 130


MEANINGS = {
    Exit.OK: "Done; whatever was checked holds.",
    Exit.FAILED: "The command ran and found a problem (a broken hash chain, a failing check).",
    Exit.USAGE: "The command line was wrong (unknown option, missing argument).",
    Exit.USER_ERROR: "The command could not run as asked; the message says what to do.",
    Exit.NOTHING_TO_VERIFY: "There was nothing to verify (no checks, no flags): never a pass.",
    Exit.WAITING_ON_PERSON: "Nothing is left for the agent to fix, but a question waits on the person (a test or a "
                            "contract item the agent changed: `vacant asks`): not a pass.",
    Exit.INTERNAL: "vacant itself failed; the message and `errors.log` in the state directory (`vacant doctor` names it) say where.",
    Exit.INTERRUPTED: "Stopped by Ctrl-C or SIGTERM: every process group it started was killed, nothing half-written "
                      "kept (`vacant do`: hooks removed, nothing verified).",
}


def render_doc() -> str:
    lines = [
        "# Exit codes of `vacant`",
        "",
        DOC.header(),
        "",
        "| code | name | meaning |",
        "|---|---|---|",
    ]
    lines += [f"| {code.value} | `{code.name}` | {MEANINGS[code]} |" for code in Exit]
    return "\n".join(lines) + "\n"


DOC = GeneratedDoc('EXIT_CODES.md', render_doc, ("vacant/core/exitcodes.py",))
