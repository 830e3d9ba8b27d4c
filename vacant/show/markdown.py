"""`vacant report --format md`: a Stop report as GitHub-flavoured Markdown, for a pull-request
comment. The whole text stays within 65,000 characters (GitHub refuses a comment body over 65,536):
rows that do not fit are left out, with a line saying how many and where to see them all. When every
row fits, what each finding's step changed at its location (the report's `diff`) follows in a
collapsed `<details>` block, one fenced diff per finding while room lasts.

Everything taken from the run (paths, messages, check names) is escaped for a table cell: pipes,
backticks, HTML-significant characters and Markdown emphasis characters lose their meaning, and a
newline becomes a space, so a message cannot break the table or inject markup.
"""

from __future__ import annotations

import re
from typing import Any

from vacant.attribute import others
from vacant.core import levels

LIMIT = 65_000
_CELL_WIDTH = 300
_SPECIAL = {"|": "\\|", "`": "\\`", "*": "\\*", "_": "\\_", "[": "\\[", "]": "\\]", "<": "&lt;", ">": "&gt;",
            "&": "&amp;", "#": "\\#", "~": "\\~", "\\": "\\\\"}


def cell(value: Any, width: int = _CELL_WIDTH) -> str:
    text = " ".join(str("" if value is None else value).split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    return "".join(_SPECIAL.get(char, char) for char in text)


def code(value: Any) -> str:
    """An inline code span: backslash escapes do not work inside one, so backticks and line
    breaks are taken out instead."""
    return "`" + " ".join(str(value).replace("`", "'").split())[:200] + "`"


def _who(item: dict[str, Any]) -> str:
    actor = item.get("actor") or {}
    if actor:
        return "/".join(str(actor.get(k) or "?") for k in ("platform", "agent_definition", "model"))
    written = (item.get("evidence") or {}).get("written_by")
    return f"nobody; written by {others.describe(written)}" if written else "nobody"


def _elsewhere(workspace: dict[str, Any] | None) -> list[str]:
    """What the workspace holds that this run did not make: who wrote each path, the checks it turns."""
    if not workspace:
        return []
    lines = [f"**Not this run's** (never sent to the agent as its own): {cell(others.sentence(workspace), 600)}", ""]
    lines += [f"- {cell(item['change'])} {code(item['path'])}: {cell(others.describe(item['by']))}"
              for item in workspace["changes"][:20]]
    lines += [f"- {cell(row['kind'])} {cell(row['name'], 80)}: {'✅ pass' if row['passed'] else '❌ fail'} on this run's "
              f"work, {'✅ pass' if row['passed_live'] else '❌ fail'} on the workspace"
              for row in workspace.get("checks") or []]
    return lines + [""]


def _row(item: dict[str, Any]) -> str:
    where = f"{item['path']}:{item['line']}" if item.get("path") and item.get("line") else (item.get("path") or "(no location)")
    step = f"{item['step']} ({item['tool']})" if item.get("step") is not None else "—"
    rerun = (item.get("evidence") or {}).get("rerun") or ""
    what = f"{item['source']} {item['name']}: {item['message']}"
    if item.get("test"):  # a failing test: its id, and the files of the change that broke it
        touched = f" (the change touched {', '.join(item['changed'])})" if item.get("changed") else ""
        what = f"test {item['test']}{touched} fails: {item['message']}"
    return "| " + " | ".join([
        cell(item["id"]), f"**{cell(item['level'])}**", cell(where), cell(step), cell(_who(item)),
        cell(item.get("lineage_source") or "—"), cell(what), cell(rerun),
    ]) + " |"


def render(report: dict[str, Any], limit: int = LIMIT) -> str:
    findings = report.get("findings", [])
    coverage = report.get("read_coverage") or {}
    head = [f"### vacant: {len(findings)} finding(s) in run {code(report.get('run'))}", ""]
    checks = report.get("checks", [])
    if report.get("contract_error"):
        head += [f"**Contract error** (nothing was verified): {cell(report['contract_error'].get('message'), 300)}", ""]
    if checks:
        head.append("Checks: " + ", ".join(f"{c.get('kind', 'check')} {cell(c['name'], 80)} "
                                           f"{'✅ pass' if c['passed'] else '❌ fail'}" for c in checks))
        head.append("")
    head += _elsewhere(report.get("workspace"))
    head.append(f"Read coverage: **{cell(coverage.get('state'))}** ({cell(coverage.get('why'))})")
    head.append("")
    counts: dict[str, int] = {}
    for item in findings:
        counts[item["level"]] = counts.get(item["level"], 0) + 1
    if counts:
        head += ["| level | findings | what it means |", "|---|---:|---|"]
        head += [f"| **{cell(level)}** | {n} | {cell(levels.LEVELS.get(level, ('',))[0])} |" for level, n in counts.items()]
        head.append("")
    problems = report.get("record_problems") or []  # vacant's own record altered: the person looks
    head += [f"- record problem: {cell(p.get('kind'))}: {cell(p.get('detail'), 200)}" for p in problems]
    head += [""] if problems else []
    tail = ["", f"Full report: {code('vacant report ' + str(report.get('run')))}; steps: `vacant log`; "
                "the run view: `vacant view`."]
    if not findings:
        return "\n".join(head + ([] if report.get("contract_error") else ["No findings."]) + tail)
    table = ["| id | level | location | step | actor | lineage | finding | rerun |",
             "|---|---|---|---|---|---|---|---|"]
    return _fit(head, table, [_row(item) for item in findings], _diffs(findings), tail, limit)


def fence(text: str) -> str:
    """A fence longer than any run of backticks in `text`, so the text cannot close it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _diffs(findings: list[dict[str, Any]]) -> list[str]:
    """One fenced diff per finding that has one (what its step changed at its location)."""
    blocks = []
    for item in findings:
        diff = item.get("diff")
        if isinstance(diff, str) and diff.strip():
            step = f"step {item['step']} ({cell(item.get('tool'))})" if item.get("step") is not None else "no step"
            mark = fence(diff)
            files = ", ".join(item.get("changed") or []) or item.get("path")
            blocks.append(f"{code(item['id'])} {step}, {cell(files)}\n\n{mark}diff\n{diff.rstrip()}\n{mark}\n")
    return blocks


def _fit(head: list[str], table: list[str], rows: list[str], diffs: list[str], tail: list[str], limit: int) -> str:
    note_room = 200
    used = len("\n".join(head + table + tail)) + note_room
    kept = []
    for row in rows:
        if used + len(row) + 1 > limit:
            break
        kept.append(row)
        used += len(row) + 1
    body = head + table + kept
    if len(kept) < len(rows):
        body += ["", f"_{len(rows) - len(kept)} more finding(s) not shown: the comment is kept under "
                     f"{limit:,} characters; `vacant report` lists them all._"]
    opening, closing = ["", "<details><summary>What each finding's step changed there</summary>", ""], ["</details>"]
    used += len("\n".join(opening + closing)) + 2
    shown = []
    for block in diffs if len(kept) == len(rows) else ():  # diffs only when every row fits
        if used + len(block) + 1 > limit:
            break
        shown.append(block)
        used += len(block) + 1
    if shown:
        body += opening + shown + closing
    return "\n".join(body + tail)
