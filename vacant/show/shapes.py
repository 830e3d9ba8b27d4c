"""The JSON printed by `vacant blame --json`, `vacant summary --json`, `vacant restore --json` and
`vacant view --json`:
the single source for their fields (a test compares real output with it) and for
docs/VIEW_JSON.md (generated through vacant/gendocs.py).
"""

from __future__ import annotations

from vacant.core.docgen import GeneratedDoc
from vacant.core.linecarry import ORIGINS

# the per-line fields git blame's porcelain gives, as `vacant blame --json` names them
GIT_LINE_FIELDS: list[tuple[str, str]] = [
    ("lines[].commit", "git's commit for the line (`git blame -w -M`), null when not committed (the work tree)"),
    ("lines[].author", "that commit's author name, as git blame gives it (null when not committed)"),
    ("lines[].author_mail", "the author's mail, `<…>` as git gives it"),
    ("lines[].author_time", "the author date, unix seconds"),
    ("lines[].author_tz", "the author's time zone, `+hhmm`"),
    ("lines[].summary", "the commit's subject line"),
    ("lines[].boundary", "whether git marks the commit a boundary (the root, or the range's edge)"),
    ("lines[].orig_line", "the line's number in that commit"),
    ("lines[].orig_path", "the file's path in that commit (git follows renames)"),
]

# `vacant blame --porcelain`: vacant's headers after git's, per line (key, JSON field, meaning)
PORCELAIN_KEYS: list[tuple[str, str, str]] = [
    ("vacant-origin", "origin", "who wrote it (the `origin` values above); absent never"),
    ("vacant-run", "run", "the run of the writing step"),
    ("vacant-step", "step", "the step number in that run"),
    ("vacant-tool", "tool", "the step's tool"),
    ("vacant-cell", "actor", "the step's cell, `platform/agent_definition/model/task_family` (`?` for a part not known)"),
    ("vacant-agent-id", "agent_id", "the sub-agent id of the step"),
    ("vacant-open-step", "open_steps", "origin group: one header per step that was open"),
    ("vacant-source", "source", "`--team`: `local` or `team`"),
    ("vacant-key-name", "key_name", "`--team`: the name of the key that signed the run's record"),
    ("vacant-finding", "findings", "one header per finding standing on the line"),
]

# command -> (what the object is, [(field, meaning)]); nested rows are written "outer[].inner"
SHAPES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "blame": ("One object for the file (`vacant blame [REV --] FILE --json`; `-L` keeps the lines asked for).", [
        ("path", "the file, workspace-relative (posix)"),
        ("rev", "the commit blamed (`REV`), or null for the work tree"),
        ("runs", "the run ids considered, oldest first"),
        ("lines", "one object per line of the file (at REV, or as it is now), in order"),
        ("lines[].line", "the line number (from 1)"),
        ("lines[].text", "the line's text (undecodable bytes replaced)"),
        *GIT_LINE_FIELDS,
        ("lines[].origin", "who wrote it: " + ", ".join(f"`{name}`" for name in ORIGINS) + " (see VIEW.md)"),
        ("lines[].run", "the run of the writing step (null for baseline, outside, unknown)"),
        ("lines[].step", "the step number in that run (the out-of-band change set's step for out_of_band)"),
        ("lines[].tool", "the step's tool (`oob` for an out-of-band change set)"),
        ("lines[].actor", "the step's actor cell {platform, agent_definition, model, task_family}, or null"),
        ("lines[].agent_id", "the sub-agent id of the step, or null (the main agent)"),
        ("lines[].open_steps", "origin group: the steps open when the change was seen (one of them wrote it)"),
        ("lines[].findings", "ids of findings standing on this line: the latest Stop report's, found again by "
                             "their text, and standing human flags"),
    ]),
    "blame --team": ("One object for the file: this workspace's runs and the team's synced run records that "
                     "changed it, line by line (docs/VIEW.md).", [
        ("path", "the file, repository-relative (posix)"),
        ("rev", "the commit blamed (`REV`), or null for the work tree"),
        ("line_key", "the root commit keying the line hashes (docs/SHARE.md), or null when the repository has none"),
        ("runs", "the runs considered (those that changed the file), in the order they are walked: by start time"),
        ("runs[].run", "the run id"),
        ("runs[].source", "`local` (recorded in this workspace) or `team` (a verified synced record)"),
        ("runs[].key", "team: the signing key's fingerprint; local: null"),
        ("runs[].key_name", "team: the key's name in `.vacant-team-keys`; local: null"),
        ("runs[].commit", "HEAD when the run started, or null"),
        ("runs[].started", "unix time of the run's first record (the recording machine's clock)"),
        ("runs[].line_data", "whether the run's line data for the file was used"),
        ("runs[].why", "when not: why the run is blamed file-level (a format 1 record, a cap, another key, …)"),
        ("lines", "one object per line of the file as it is now, in order"),
        ("lines[].line", "the line number (from 1)"),
        ("lines[].text", "the line's text (undecodable bytes replaced)"),
        *GIT_LINE_FIELDS,
        ("lines[].origin", "who wrote it: " + ", ".join(f"`{name}`" for name in ORIGINS)
                           + "; `unknown` also after a run blamed file-level"),
        ("lines[].run", "the run of the writing step (null for baseline, outside, unknown)"),
        ("lines[].step", "the step number in that run"),
        ("lines[].tool", "the step's tool (`oob` for an out-of-band change set)"),
        ("lines[].actor", "the step's cell {platform, agent_definition, model, task_family}, or null"),
        ("lines[].open_steps", "origin group: the steps open when the change was seen (one of them wrote it)"),
        ("lines[].source", "`local` or `team` for a line a run explains, else null"),
        ("lines[].key", "team: the fingerprint of the key that signed the run's record"),
        ("lines[].key_name", "team: that key's name in `.vacant-team-keys`"),
        ("lines[].findings", "ids of findings standing on this line, from this workspace's reports and flags"),
        ("file_level", "steps of runs blamed file-level that changed the file: the `lines[]` fields from `origin` "
                       "to `key_name`, and `why`"),
        ("rejected", "team records left out (bad signature, unknown key, edited; `vacant sync --status` lists them)"),
    ]),
    "summary": ("One object for the change range `BASE..HEAD` (`vacant summary`; see vacant/show/summary.py).", [
        ("base", "the range's base commit (full id)"),
        ("head", "the range's head commit"),
        ("added", "lines the range adds (`git diff -w -M`: re-indented and moved lines are not added)"),
        ("agent_lines", "of those, lines a recorded agent step wrote (one of several open steps counts)"),
        ("people_lines", "the others: lines git's authors wrote (out-of-band changes inside a run too)"),
        ("cells", "agent lines per cell, most first"),
        ("cells[].cell", "{platform, agent_definition, model, task_family}, or null for lines one of several open steps wrote"),
        ("cells[].lines", "how many added lines"),
        ("people", "people's lines per git author, most first"),
        ("people[].author", "the author's name as git gives it (`Not Committed Yet` never in a range)"),
        ("people[].author_mail", "the author's mail, `<…>`"),
        ("people[].lines", "how many added lines"),
        ("runs", "the runs whose steps wrote added lines, by id"),
        ("runs[].run", "the run id"),
        ("runs[].source", "`local` or `team` (a verified synced record)"),
        ("runs[].key_name", "team: the name of the key that signed the record"),
        ("runs[].lines", "added lines the run's steps wrote"),
        ("runs[].steps", "those steps' numbers"),
        ("runs[].read_coverage", "the run's read coverage (`complete`, `partial`, `none`), as its Stop report graded it"),
        ("findings", "findings standing on the added lines (found there by text, or blaming a step that wrote one)"),
        ("findings[].id", "the finding's id"),
        ("findings[].run", "the run that reported it"),
        ("findings[].name", "the check's name, or the flag's id"),
        ("findings[].level", "its level (docs/LEVELS.md)"),
        ("findings[].step", "the step it blames"),
        ("findings[].path", "the file it is in"),
        ("levels", "level -> how many of those findings"),
        ("files", "per file with added lines"),
        ("files[].path", "the path at HEAD"),
        ("files[].added", "lines it adds"),
        ("files[].agent_lines", "of those, an agent's"),
        ("files[].people_lines", "of those, people's"),
        ("rejected", "team records left out (bad signature, unknown key; `vacant sync --status` lists them)"),
    ]),
    "restore": ("One object for the restored state.", [
        ("run", "the run id"),
        ("step", "the step number"),
        ("when", "`after` (default) or `before` (`--before`)"),
        ("to", "the absolute directory written"),
        ("files", "regular files and symlinks written"),
        ("bytes", "their total size"),
        ("unrestorable", "files left out: [{path, size}], content over the object-store cap (exit 1 when any)"),
    ]),
    "view": ("One object for the page written.", [
        ("run", "the run id"),
        ("html", "the page's path (`.git/vacant/runs/RUN/view.html`)"),
        ("opened", "whether a browser was started"),
    ]),
}

def fields(command: str) -> list[str]:
    return [name for name, _ in SHAPES[command][1]]


def render_doc() -> str:
    lines = ["# JSON of `vacant blame`, `summary`, `restore` and `view`", "",
             DOC.header(),
             "The commands themselves are described in [VIEW.md](VIEW.md); `vacant report --json` in [REPORT.md](REPORT.md).", ""]
    for command, (what, rows) in SHAPES.items():
        lines += [f"## `vacant {command} --json`", "", what, "", "| field | meaning |", "|---|---|"]
        lines += [f"| `{name}` | {meaning} |" for name, meaning in rows]
        lines.append("")
    lines += ["## `vacant blame --porcelain`", "",
              "git blame's porcelain (`git blame --porcelain -w -M`) line by line: the header "
              "`<commit> <orig_line> <line> 1`, the commit's headers (author, author-mail, author-time, …, "
              "summary, filename) the first time the commit appears, then vacant's headers below (each only "
              "when it has a value), then the line after a TAB. Uncommitted lines have the commit "
              "`0000000000000000000000000000000000000000` and the author `Not Committed Yet`, as git's.", "",
              "| header | meaning |", "|---|---|"]
    lines += [f"| `{key}` | {meaning} (JSON `{field_name}`) |" for key, field_name, meaning in PORCELAIN_KEYS]
    lines.append("")
    return "\n".join(lines)


DOC = GeneratedDoc("VIEW_JSON.md", render_doc, ("vacant/show/shapes.py",))
