"""Is a tree accepted? The contract's guards and checks, then the person's standing flags.

One call (`run_gates`) on any tree: the live workspace (`vacant check`) or a scratch directory
rebuilt from a recorded state (replay), with the flags read from the live workspace.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vacant.core.findings import Finding
from vacant.policy.contract.checks import CheckResult, run_check, site_for
from vacant.policy.contract.contract import Contract
from vacant.policy.contract.flags import Flag, active_flags, locate


@dataclass
class GateReport:
    guards: list[CheckResult]  # `[[guard]]` and the old `[[precondition]]`
    checks: list[CheckResult]
    flags: list[tuple["Flag", Finding]]  # the standing flags, each with its finding
    findings: list[Finding]  # every blocking-or-env finding: guards, checks, then flags
    nothing_to_verify: bool  # no acceptance check and no flag: never a pass

    @property
    def preconditions(self) -> list[CheckResult]:  # the old name
        return self.guards

    @property
    def passed(self) -> bool:
        return not self.findings and not self.nothing_to_verify

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "nothing_to_verify": self.nothing_to_verify,
            "guards": [result.to_json() for result in self.guards],
            "checks": [result.to_json() for result in self.checks],
            "flags": [{**flag.to_json(), "finding": finding.id} for flag, finding in self.flags],
            "findings": [finding.to_json() for finding in self.findings],
        }


def run_gates(contract: "Contract | None", root: Path, flags_root: Path | None = None) -> GateReport:
    """Guards, then acceptance checks, then standing human flags, on the workspace at `root`,
    behind the wall where bubblewrap runs (the checks run code the agent may have written).

    `flags_root` is the workspace whose state directory holds the flags (default: `root`).
    """
    root = Path(root)
    site = site_for(root) if contract and (contract.guards or contract.check) else None
    guards = [run_check(check, root, precondition=True, site=site) for check in (contract.guards if contract else [])]
    checks = [run_check(check, root, site=site) for check in (contract.check if contract else [])]
    live_flags = active_flags(flags_root or root)  # signed and not withdrawn; tampered ones warn
    standing = [(flag, finding) for flag in live_flags if (finding := locate(flag, root)) is not None]
    findings = [finding for result in (*guards, *checks) for finding in result.findings]
    findings += [finding for _flag, finding in standing]
    nothing = not checks and not live_flags
    return GateReport(guards, checks, standing, findings, nothing)
