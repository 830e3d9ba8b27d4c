"""The call types of a platform's optional transcript checks (vacant/record/recorder.py calls
each when the platform has it, None where it has none). A module of its own: the protocol
(vacant/platforms/protocol.py) uses them at run time, and vacant/platforms/base.py, on the hook's
hot path, names them for the type checker only.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from vacant.core.calls import BatchCall, HookCall

Settled = Callable[[HookCall, list[str]], dict[str, tuple[str, "int | None"]]]
"""(call, open tool-call ids) -> {id: (outcome, exit code)}: finished, with no Post to come."""
Unhooked = Callable[[HookCall, set[str]], list[tuple[BatchCall, str]]]
"""(call, known tool-call ids) -> [(call, outcome)]: calls that reached no hook."""
HookRuns = Callable[[Path], "str | None"]
"""(workspace root) -> None when the hook may run an approved line its wall would break, once, outside
that wall (vacant/record/unwalled.py), else why it may not here."""
Unheard = Callable[[HookCall, "str | None", dict[str, str]], "list[tuple[str, str]] | None"]
"""(call, agent id, {id: outcome}) -> [(id, kind)]: recorded calls the transcript does not hold
(None: it cannot judge)."""
