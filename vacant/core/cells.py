"""An agent cell's fields as people see them: one spelling for a value nobody reported.

The report (`vacant report`), the step log (`vacant log`) and the reputation table all show an
unknown model (or platform, definition, task family) as `UNKNOWN`; stdlib only (hot path safe).
"""

from __future__ import annotations

from typing import Any

UNKNOWN = "unknown"
FIELDS = ("platform", "agent_definition", "model", "task_family")


def shown(actor: dict[str, Any] | None, name: str) -> str:
    """One field of an actor cell, or UNKNOWN when it is missing or empty."""
    value = (actor or {}).get(name)
    return str(value) if value not in (None, "") else UNKNOWN
