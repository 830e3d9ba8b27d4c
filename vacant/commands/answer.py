"""`vacant approve ASK`, `vacant decline ASK`: the person's answer to an action the gate held back,
signed with their key; refused from inside an agent's tool call."""

from __future__ import annotations

from typing import Optional

import typer

from vacant.commands.asks import (
    fail,
    receipt_lines,
    resolve_id,
    when,
)
from vacant.commands.common import print_json, speak_for_person, workspace
from vacant.policy.gate.asks import answer as person
from vacant.policy.gate.asks.book import AskError


def register(app: typer.Typer) -> None:
    @app.command("approve")
    def approve_command(
        ask_id: str = typer.Argument(..., metavar="ASK", help="The card's id, e.g. ask#3 (`vacant asks`)."),
        expires: Optional[str] = typer.Option(None, "--expires", metavar="DURATION",
                                              help="The approval goes stale after this long, e.g. 10m, 2h, 1d."),
        refuse_if_moved: bool = typer.Option(False, "--refuse-if-moved",
                                             help="The approval goes stale if the workspace changes before it is used."),
        as_json: bool = typer.Option(False, "--json", help="The answered card as one JSON object."),
    ) -> None:
        """Approve an action the gate held back: the same action passes exactly once (signed with your key)."""
        speak_for_person("approve")
        seconds = None
        if expires is not None:
            try:
                seconds = person.parse_duration(expires)
            except ValueError as error:
                raise typer.BadParameter(str(error), param_hint="--expires") from None
        root = workspace()
        resolve_id(root, ask_id, False)
        try:
            card = person.answer(root, ask_id, "approved", expires_s=seconds, refuse_if_moved=refuse_if_moved)
        except AskError as error:
            fail(str(error))
        if as_json:
            print_json(card)
            return
        if card.get("question"):
            typer.echo(f"accepted {card['id']}: {card.get('action')}; every later Stop takes this exact change as yours")
            return
        until = f" until {when(card['decision']['expires_at'])}" if card["decision"].get("expires_at") else ""
        moved = ", unless the workspace changes first" if refuse_if_moved else ""
        typer.echo(f"approved {card['id']}{until}{moved}: the agent may now make the same call once")
        typer.echo("\n".join(receipt_lines(card.get("receipts"))))

    @app.command("decline")
    def decline_command(
        ask_id: str = typer.Argument(..., metavar="ASK", help="The card's id, e.g. ask#3 (`vacant asks`)."),
        as_json: bool = typer.Option(False, "--json", help="The answered card as one JSON object."),
    ) -> None:
        """Decline an action the gate held back (signed with your key); the agent is told, nothing runs."""
        speak_for_person("decline")
        root = workspace()
        resolve_id(root, ask_id, False)
        try:
            card = person.answer(root, ask_id, "declined")
        except AskError as error:
            fail(str(error))
        if as_json:
            print_json(card)
            return
        if card.get("question"):
            typer.echo(f"rejected {card['id']}: {card.get('action')}; yours stands, and the next Stop holds the "
                       "agent to it")
            return
        typer.echo(f"declined {card['id']}: the action will not run")

