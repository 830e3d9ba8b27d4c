"""The summary of an experiment as Markdown (`OUT/summary.md`) and one self-contained HTML page
(`OUT/summary.html`: no script, no external resource, an inline SVG of each arm's success rate
with its Wilson interval and one of each paired difference with its interval). Both cite the plan's
hash and say how to read the numbers; each cell links to its workspace (the recorded runs are in
its state directory: `vacant runs` there lists them).
"""

from __future__ import annotations

from html import escape
from typing import Any

from vacant.experiment.arms import ARM_NAMES

READING = ("Read the intervals, not the point estimates: an interval that includes 0 shows no difference at this "
           "n (which is not evidence that there is none). The plan was fixed before the first run "
           "(plan.json, hash above); tasks, arms, outcome and analysis cannot have been chosen after seeing results.")


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


def _interval(pair: tuple[float, float] | list[float] | None, signed: bool = False) -> str:
    if pair is None:
        return "–"
    fmt = "{:+.2f}" if signed else "{:.2f}"
    return f"[{fmt.format(pair[0])}, {fmt.format(pair[1])}]"


def _num(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def arm_order(plan: dict[str, Any]) -> list[str]:
    """The plan's arms in the canonical order (plan.json stores them with sorted keys)."""
    return [name for name in ARM_NAMES if name in plan["arms"]]


def markdown(summary: dict[str, Any], plan: dict[str, Any]) -> str:
    lines = [
        "# vacant experiment: summary", "",
        f"Plan `{summary['plan']}` · agent {plan['agent']} · model {plan['model'] or '(the agent default)'} · "
        f"{len(plan['tasks'])} tasks · arms {', '.join(arm_order(plan))} · {plan['repeats']} repeat(s) · "
        f"{plan['rounds']} feedback round(s)", "",
        f"Cells done: {summary['cells_done']} of {summary['cells_planned']}"
        + (f" ({summary['cells_restarted']} restarted after an interruption)" if summary["cells_restarted"] else ""),
        "", f"Primary outcome: {plan['primary_outcome']}.", "",
        "## Success rate per arm", "",
        "| family | arm | n | successes | rate | Wilson 95% | accepted | hidden pass |", "|---|---|---|---|---|---|---|---|",
    ]
    lines += [f"| {r['family']} | {r['arm'].upper()} | {r['n']} | {r['successes']} | {_pct(r['rate'])} | "
              f"{_interval(r['wilson95'])} | {r['accepted']} | {r['hidden']} |" for r in summary["rates"]]
    lines += ["", "## Paired differences (same task, same repeat)", "",
              "| family | comparison | pairs | both | only first | only second | neither | difference | 95% interval | reading |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {d['family']} | {d['a'].upper()}−{d['b'].upper()} | {d['pairs']} | {d['both']} | {d['only_a']} | "
              f"{d['only_b']} | {d['neither']} | {_num(d['difference'], 2)} | {_interval(d['interval95'], True)} | "
              f"{d['verdict']} |" for d in summary["differences"]]
    lines += ["", "## Cost per arm (means per cell)", "",
              "| arm | n | agent runs | seconds | input tokens | output tokens | cells with token counts |",
              "|---|---|---|---|---|---|---|"]
    lines += [f"| {c['arm'].upper()} | {c['n']} | {_num(c['agent_runs'])} | {_num(c['seconds'])} | "
              f"{_num(c['input_tokens'], 0)} | {_num(c['output_tokens'], 0)} | {c['with_tokens']} |"
              for c in summary["cost"]]
    arms = arm_order(plan)
    lines += ["", "## Per task (successes / cells)", "", "| task | family | " + " | ".join(a.upper() for a in arms) + " |",
              "|---|---|" + "---|" * len(arms)]
    lines += [f"| {t['task']} | {t['family']} | " + " | ".join(f"{t[a][0]}/{t[a][1]}" for a in arms) + " |"
              for t in summary["per_task"]]
    lines += ["", "## How to read this", "", READING, ""]
    return "\n".join(lines)


def svg(summary: dict[str, Any]) -> str:
    """Two panels: rates (0..1) with Wilson intervals; paired differences (−1..1) with theirs."""
    rates = [(f"{r['family']} {r['arm'].upper()}", r["rate"], r["wilson95"]) for r in summary["rates"]]
    diffs = [(f"{d['family']} {d['a'].upper()}−{d['b'].upper()}", d["difference"], d["interval95"])
             for d in summary["differences"]]
    return _panel(rates, 0.0, 1.0, "success rate, Wilson 95%") + (
        _panel(diffs, -1.0, 1.0, "paired difference, 95% interval") if diffs else "")


def _panel(rows: list[tuple[str, float | None, Any]], low: float, high: float, title: str) -> str:
    left, width, step = 190, 420, 24
    height = step * len(rows) + 56

    def x(value: float) -> float:
        return left + (value - low) / (high - low) * width

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 40}" height="{height}" '
             f'role="img" aria-label="{escape(title)}"><style>text{{font:12px sans-serif}}</style>',
             f'<text x="{left}" y="14">{escape(title)}</text>']
    for i, (label, point, interval) in enumerate(rows):
        y = 34 + i * step
        parts.append(f'<text x="{left - 8}" y="{y + 4}" text-anchor="end">{escape(label)}</text>')
        parts.append(f'<line x1="{left}" y1="{y}" x2="{left + width}" y2="{y}" stroke="#eee"/>')
        if interval is not None:
            parts.append(f'<line x1="{x(interval[0]):.1f}" y1="{y}" x2="{x(interval[1]):.1f}" y2="{y}" '
                         'stroke="#246" stroke-width="2"/>')
        if point is not None:
            parts.append(f'<circle cx="{x(point):.1f}" cy="{y}" r="4" fill="#246"/>')
    bottom = 34 + len(rows) * step - 10
    for tick in (low, (low + high) / 2, high):
        parts.append(f'<line x1="{x(tick):.1f}" y1="24" x2="{x(tick):.1f}" y2="{bottom}" stroke="#bbb" '
                     'stroke-dasharray="2,3"/>')
        label = f"{tick:+g}" if low < 0 and tick else f"{tick:g}"
        parts.append(f'<text x="{x(tick):.1f}" y="{bottom + 16}" text-anchor="middle">{label}</text>')
    return "".join(parts) + "</svg>"


def _table(markdown_lines: list[str]) -> str:
    rows = [line.strip("|").split(" | ") for line in markdown_lines if not line.startswith("|---")]
    head, body = rows[0], rows[1:]
    html = "<table><tr>" + "".join(f"<th>{escape(c.strip())}</th>" for c in head) + "</tr>"
    html += "".join("<tr>" + "".join(f"<td>{escape(c.strip())}</td>" for c in row) + "</tr>" for row in body)
    return html + "</table>"


def html(summary: dict[str, Any], plan: dict[str, Any], records: list[dict[str, Any]]) -> str:
    """The Markdown's content as HTML (tables, headings, paragraphs), the plot, and one link per cell."""
    out, table = [], []
    for line in markdown(summary, plan).splitlines():
        if line.startswith("|"):
            table.append(line)
            continue
        if table:
            out.append(_table(table))
            table = []
        if line.startswith("## "):
            out.append(f"<h2>{escape(line[3:])}</h2>")
            if line == "## Paired differences (same task, same repeat)":
                out.insert(-1, f"<h2>Plot</h2>{svg(summary)}")
        elif line.startswith("# "):
            out.append(f"<h1>{escape(line[2:])}</h1>")
        elif line:
            out.append(f"<p>{escape(line)}</p>")
    cells = "".join(
        f'<li><a href="{escape(r["workspace"])}">{escape(r["cell"])}</a>: '
        f'{"success" if r["success"] else "failure"} (accepted {r["accepted"]}, hidden {r["hidden"]}, '
        f'{r["agent_runs"]} agent run(s), runs {escape(", ".join(r["runs"]))})</li>'
        for r in sorted(records, key=lambda r: r["cell"]))
    out.append(f"<h2>Cells</h2><ul>{cells}</ul>")
    style = ("body{font:14px sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 6px}")
    return (f'<!doctype html><html><head><meta charset="utf-8"><title>vacant experiment {escape(summary["plan"][:12])}'
            f'</title><style>{style}</style></head><body>{"".join(out)}</body></html>\n')
