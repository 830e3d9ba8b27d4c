"""The JSON printed by `vacant blame --json`, `vacant restore --json` and `vacant view --json`:
the single source for their fields (a test compares real output with it) and for
docs/VIEW_JSON.md (generated through vacant/gendocs.py).
"""

from __future__ import annotations

from vacant.core.docgen import GeneratedDoc
from vacant.show.blame import ORIGINS

# command -> (what the object is, [(field, meaning)]); nested rows are written "outer[].inner"
SHAPES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "blame": ("One object for the file.", [
        ("path", "the file, workspace-relative (posix)"),
        ("runs", "the run ids considered, oldest first"),
        ("lines", "one object per line of the file as it is now, in order"),
        ("lines[].line", "the line number (from 1)"),
        ("lines[].text", "the line's text (undecodable bytes replaced)"),
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
        ("html", "the page's path (`.vacant/runs/RUN/view.html`)"),
        ("opened", "whether a browser was started"),
    ]),
}

def fields(command: str) -> list[str]:
    return [name for name, _ in SHAPES[command][1]]


def render_doc() -> str:
    lines = ["# JSON of `vacant blame`, `restore` and `view`", "",
             DOC.header(),
             "The commands themselves are described in [VIEW.md](VIEW.md); `vacant report --json` in [REPORT.md](REPORT.md).", ""]
    for command, (what, rows) in SHAPES.items():
        lines += [f"## `vacant {command} --json`", "", what, "", "| field | meaning |", "|---|---|"]
        lines += [f"| `{name}` | {meaning} |" for name, meaning in rows]
        lines.append("")
    return "\n".join(lines)


DOC = GeneratedDoc("VIEW_JSON.md", render_doc, ("vacant/show/shapes.py",))
