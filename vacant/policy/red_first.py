"""Red-first: adding a check to `vacant.toml` only after running it. An acceptance check that
already passes is refused (it cannot measure the work), a precondition that does not hold is
refused, and a check red only because its tool is missing is accepted but flagged `env/NAME`.
The file is appended to (its comments kept), validated before it lands, written atomically."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import (
    ValidationError,
)

from vacant.core.atomic import atomic_write
from vacant.policy.checks import missing_tool, own_words, run_command
from vacant.policy.contract import (
    CONTRACT_FILE,
    DEFAULT_TIMEOUT_S,
    GREEN_FIRST,
    MULTILINE,
    PROBE_CAP_S,
    Check,
    CheckRefused,
    Contract,
    Probe,
    contract_path,
    describe_error,
    load_contract,
    parse_contract,
)

if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover
    pass


# -- red-first: adding a check --------------------------------------------------------------------


@dataclass
class Added:
    check: Check
    precondition: bool
    env: str | None = None  # the missing tool, when the probe was red for that reason
    warnings: list[str] = field(default_factory=list)


def _toml_string(value: str) -> str:
    out = ['"']
    for char in value:
        code = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _toml_number(value: float) -> str:
    text = repr(float(value))
    return text if text not in ("inf", "-inf", "nan") else "0.0"


def render_check(check: Check, precondition: bool) -> str:
    table = "precondition" if precondition else "check"
    lines = [f"[[{table}]]", f"name = {_toml_string(check.name)}", f"command = {_toml_string(check.command)}"]
    if check.timeout != DEFAULT_TIMEOUT_S:
        lines.append(f"timeout = {_toml_number(check.timeout)}")
    if check.probe is not None:
        probe = check.probe
        parts = [f"exit_code = {probe.exit_code}"] if probe.exit_code is not None else []
        parts += [f"seconds = {_toml_number(probe.seconds)}", f"at = {_toml_string(probe.at)}"]
        if probe.timed_out:
            parts.append("timed_out = true")
        if probe.env:
            parts.append(f"env = {_toml_string(probe.env)}")
        lines.append("probe = { " + ", ".join(parts) + " }")
    return "\n".join(lines) + "\n"


def _validated_check(name: str, command: str, timeout: float | None) -> Check:
    fields: dict[str, Any] = {"name": name, "command": command}
    if timeout is not None:
        fields["timeout"] = float(timeout)
    try:
        return Check.model_validate(fields)
    except ValidationError as error:
        raise CheckRefused(describe_error(error.errors(include_url=False)[0], {})) from None


def add_check(
    root: Path,
    name: str,
    command: str,
    precondition: bool = False,
    timeout: float | None = None,
    probe_cap: float = PROBE_CAP_S,
) -> Added:
    """Probe `command` on the workspace as it stands and, if it is the right colour, append it.

    Acceptance checks must be red now (a missing tool counts, flagged `env/NAME`); preconditions
    must be green now. The probe's evidence (exit code, seconds, time) is stored with the check.
    """
    root = Path(root)
    if "\n" in command.strip() or "\r" in command.strip():
        raise CheckRefused(f"the command is more than one line: {MULTILINE}")
    check = _validated_check(name, command, timeout)
    contract = load_contract(root) or Contract()
    if check.name in contract.names():
        raise CheckRefused(f"a check named {check.name!r} already exists in {CONTRACT_FILE}: pick another name or edit the file")
    cap = min(check.timeout, probe_cap)
    result = run_command(check.command, root, cap, root)
    at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    tool = missing_tool(result.exit_code, result.output, root)
    words = own_words(result.output)
    said = f": {words}" if words else ""
    added = Added(check, precondition, env=f"env/{tool}" if tool else None)
    if precondition:
        if result.timed_out:
            raise CheckRefused(f"precondition {check.name!r} did not finish within {cap:g} s: a precondition must hold now, quickly")
        if result.exit_code != 0:
            why = f" (`{tool}` is missing)" if tool else ""
            raise CheckRefused(
                f"precondition {check.name!r} does not hold now (exit {result.exit_code}{said}){why}: a precondition "
                "is a statement about the current state; what the work should make true is an acceptance check "
                "(add it without --precondition)"
            )
    else:
        if result.exit_code == 0 and not result.timed_out:
            raise CheckRefused(f"check {check.name!r} passes now (exit 0 in {result.seconds:.2f} s): {GREEN_FIRST}")
        if result.timed_out:
            added.warnings.append(
                f"the probe of {check.name!r} was stopped at {cap:g} s (process group killed): it did not pass, "
                "but it was not seen to fail on its own"
            )
        if tool:
            added.warnings.append(
                f"env/{tool}: `{tool}` is not available to checks, so {check.name!r} is red for a reason editing code "
                f"cannot fix: install it on PATH or in {root / '.local' / 'bin'}"
            )
    check.probe = Probe(
        exit_code=result.exit_code, seconds=round(result.seconds, 3), at=at, timed_out=result.timed_out, env=tool,
    )
    _append(root, check, precondition)
    return added


def _append(root: Path, check: Check, precondition: bool) -> None:
    """Append the check's table to vacant.toml (keeping the file's comments), validated before it lands."""
    path = contract_path(root)
    try:
        before = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        before = ""
    current = parse_contract(before, str(path)) if before else Contract()
    if check.name in current.names():  # added meanwhile, while the probe ran
        raise CheckRefused(f"a check named {check.name!r} already exists in {CONTRACT_FILE}: pick another name or edit the file")
    separator = "" if not before else ("\n" if before.endswith("\n") else "\n\n")
    after = before + separator + render_check(check, precondition)
    parse_contract(after, str(path))  # never write a file that would not load
    atomic_write(path, after)


def probe_vacuous(root: Path, cap: float = PROBE_CAP_S) -> list[str]:
    """Acceptance checks that pass right now, before any work: vacuous (the workspace drifted).

    Called when a run starts; a warning to report, never a refusal. Probes run in parallel, each
    capped at `cap` seconds.
    """
    contract = load_contract(root)
    if contract is None or not contract.check:
        return []

    def green(check: Check) -> bool:
        result = run_command(check.command, Path(root), min(check.timeout, cap), Path(root))
        return result.exit_code == 0 and not result.timed_out

    with ThreadPoolExecutor(max_workers=min(8, len(contract.check))) as pool:
        verdicts = list(pool.map(green, contract.check))
    return [check.name for check, verdict in zip(contract.check, verdicts) if verdict]
