"""`vacant asks`, `vacant ask ID`: what the gate holds for the person, and any id's fate now
(see docs/GATE.md). The answers are `vacant approve` / `vacant decline` (answer.py)."""

from __future__ import annotations

import json
import time
from typing import Any

import typer

from vacant.commands.common import print_json, workspace
from vacant.core.exitcodes import Exit
from vacant.policy.gate.asks import views as ask_views
from vacant.policy.gate.asks.book import AskBook


def fail(message: str, code: Exit = Exit.USER_ERROR) -> None:
    typer.echo(f"vacant: {message}", err=True)
    raise typer.Exit(int(code))


def when(ts: Any) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if isinstance(ts, (int, float)) else "-"


def receipt_lines(receipts: dict[str, Any] | None) -> list[str]:
    receipts = receipts or {}
    if "question" in receipts:
        return _question_lines(receipts)
    lines = []
    if receipts.get("arm"):
        lines.append(f"  arm:         {', '.join(receipts['arm'])}")
    if "command" in receipts:
        lines.append(f"  command:     {receipts['command']}")
    elif "input" in receipts:
        lines.append(f"  tool:        {receipts.get('tool')} {json.dumps(receipts['input'], sort_keys=True)[:300]}")
    lines.append(f"  in:          {receipts.get('cwd')}")
    for why in receipts.get("mayChange") or []:
        lines.append(f"  may change:  {why}")
    return lines


def _question_lines(receipts: dict[str, Any]) -> list[str]:
    """A question of the Stop's: what changed, at which step, and the change itself."""
    lines = [f"  question:    {receipts['question']}"]
    if receipts.get("step") is not None:
        lines.append(f"  step:        {receipts['step']} of run {receipts.get('run')}")
    for label in ("diff", "proposed", "as the person had it"):
        if receipts.get(label):
            lines.append(f"  {label + ':':<13}")
            lines += [f"    {line}" for line in str(receipts[label]).splitlines()]
    return lines


def _print_card(view: dict[str, Any]) -> None:
    typer.echo(f"{view['id']}  {view['fate']}: {view['detail']}")
    typer.echo("\n".join(receipt_lines(view.get("receipts"))))
    typer.echo(f"  asked:       {view.get('asked', 1)} time(s), first at {when(view.get('created'))}, "
               f"run {', '.join(view.get('runs') or []) or '-'}")
    if view.get("replaces"):
        typer.echo(f"  replaces:    {view['replaces']} (its approval went stale)")
    stale = view.get("stale")
    if stale:
        refused = f"; the gate refused the action with {stale['refused']}" if stale.get("refused") else ""
        nxt = f"; the new question is {stale['next']}" if stale.get("next") else ""
        typer.echo(f"  stale:       {stale['reason']}{refused}{nxt}")
    spent = view.get("spent")
    if spent:
        step = spent.get("step")
        if step:
            outcome = step.get("outcome") or "not finished yet"
            typer.echo(f"  spent:       by step {step['id']} ({step['state']}; outcome {outcome}"
                       + (f", exit {step['exit_code']}" if step.get("exit_code") is not None else "") + ")")
            for item in step.get("attributions") or []:
                typer.echo(f"               finding {item['finding']} attributed to it ({item['level']})")
        else:
            typer.echo(f"  spent:       by call {spent.get('key')} of run {spent.get('run')} (its step is not in the log)")
    if view["fate"] == "awaiting-human" and view.get("question"):
        typer.echo(f"  answer:      vacant approve {view['id']} (accept the change)   |   "
                   f"vacant decline {view['id']} (reject it: yours stands)")
    elif view["fate"] == "awaiting-human":
        typer.echo(f"  answer:      vacant approve {view['id']}   |   vacant decline {view['id']}")


def _print_step(view: dict[str, Any]) -> None:
    outcome = f", outcome {view['outcome']}" if view.get("outcome") else ""
    code = f", exit {view['exit_code']}" if view.get("exit_code") is not None else ""
    typer.echo(f"{view['id']}  step {view['step']} of run {view['run']}: {view['state']}{outcome}{code}")
    typer.echo(f"  tool:        {view['tool']} {ask_views.brief(view.get('input'), 200)}")
    for item in view.get("attributions") or []:
        typer.echo(f"  finding:     {item['finding']} attributed to it ({item['level']})")
    if view.get("authorised_by"):
        typer.echo(f"  authorised:  by the person's approval of {', '.join(view['authorised_by'])}")


def _print_lists(lists: dict[str, list[dict]]) -> None:
    titles = {"pending_steps": "pending steps (started, not finished)",
              "steps_awaiting_settlement": "steps awaiting settlement (finished, not yet judged at Stop)",
              "cards_awaiting_a_person": "cards awaiting a person"}
    for key, title in titles.items():
        items = lists[key]
        typer.echo(f"{title}: {len(items)}", err=True)
        for item in items[:20]:
            if item.get("kind") == "card":
                typer.echo(f"  {item['id']}  {item.get('action')}", err=True)
            else:
                typer.echo(f"  {item['id']}  {item['tool']} {item['input']}", err=True)
        if len(items) > 20:
            typer.echo(f"  … and {len(items) - 20} more", err=True)


def resolve_id(root, ask_id: str, as_json: bool) -> dict:
    try:
        return ask_views.resolve(root, ask_id)
    except ask_views.UnknownId as error:
        if as_json:
            print_json({"id": ask_id, "error": "unknown", "lists": error.lists})
        typer.echo(f"vacant: nothing is called {ask_id!r} (ids match exactly). What can be asked about:", err=True)
        _print_lists(error.lists)
        raise typer.Exit(int(Exit.USER_ERROR))
    except ask_views.AmbiguousId as error:
        if as_json:
            print_json({"id": ask_id, "error": "ambiguous", "matches": error.matches})
        fail(f"refused: {error}")


def register(app: typer.Typer) -> None:
    @app.command("asks")
    def asks_command(
        as_json: bool = typer.Option(False, "--json", help="A JSON list of cards with their fates."),
        show_all: bool = typer.Option(False, "--all", help="Every card, answered ones too."),
    ) -> None:
        """What waits for you: actions the gate held back (awaiting-human) and approvals not yet used."""
        root = workspace()
        cards = AskBook(root).cards()
        views = [ask_views.card_view(card, root) for card in cards]
        if not show_all:
            views = [v for v in views if v["fate"] == "awaiting-human"
                     or (v["fate"] == "approved" and not v.get("question"))]  # a question's answer is never spent
        if as_json:
            print_json(views)
            return
        if not views:
            typer.echo("nothing waits for you" if not show_all else "no cards yet")
            return
        for view in views:
            _print_card(view)

    @app.command("ask")
    def ask_command(
        ask_id: str = typer.Argument(..., metavar="ID", help="ask#N, RUN#STEP or step#N, exactly."),
        as_json: bool = typer.Option(False, "--json", help="One JSON object."),
    ) -> None:
        """Answer any id, read now: a card's fate (awaiting-human, approved, declined, stale, spent) or a step's state."""
        view = resolve_id(workspace(), ask_id, as_json)
        if as_json:
            print_json(view)
        elif view["kind"] == "card":
            _print_card(view)
        else:
            _print_step(view)
