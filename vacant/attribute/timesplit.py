"""Where a Stop's time went, as `vacant report` and `vacant view` show it: the report's `split`
(each part's seconds and check runs) and each check's selection (how many recorded tests were
reused and why the others ran).

Reads a report's JSON only: importing it imports nothing else, so the commands that show a report
start without the contract's parser (tests/unit/commands/test_cli_start.py).
"""

from __future__ import annotations

from typing import Any


def selection_line(name: str, chosen: dict[str, Any]) -> str:
    """How many of a check's recorded tests the Stop reused, and why the others ran."""
    reasons = "; ".join(f"{count} {reason}" + (f" ({chosen['example'][reason]})" if reason in chosen.get("example", {})
                                                else "") for reason, count in chosen.get("why", {}).items())
    return (f"selection: {name}: {chosen['reused']} of {chosen['recorded']} recorded test(s) reused (inputs unchanged "
            f"since they passed on the baseline), {chosen['ran']} ran" + (f": {reasons}" if reasons else "")
            + "; tests new since the baseline ran too"
            + (f"; {chosen['uncollected']} test file(s) not even collected" if chosen.get("uncollected") else ""))


def time_lines(report: dict[str, Any]) -> list[str]:
    """Where a Stop's time went (the report's `split`, each part's seconds and check runs), and for
    each check how many tests its final run selected and reused, and why: `vacant report` and
    `vacant view` show the same lines."""
    lines = []
    if report.get("reused"):
        lines.append(f"nothing changed since Stop {report['reused']}: its answers, no check run again")
    if report.get("split"):
        lines.append("time: " + ", ".join(f"{name} {part['seconds']:g} s ({part['check_runs']} run(s))"
                                         for name, part in report["split"].items()))
    lines += [selection_line(name, chosen) for name, chosen in (report.get("selection") or {}).items()]
    return lines
