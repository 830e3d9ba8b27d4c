"""The three arms: what the agent is told after a failed Stop, with the same agent-run budget.

- **rs** (resample): no feedback. Each attempt is a fresh copy of the seed and a fresh session
  with the original prompt (`vacant do --rounds 0`); up to ROUNDS + 1 attempts, stopping at the
  first one whose contract passes. The outcome is that attempt's (or the last one's) workspace.
- **rf** (generic feedback): one session, continued up to ROUNDS times with GENERIC_FEEDBACK,
  a fixed sentence naming no check, file or line (`vacant do --feedback-text`).
- **rl** (located feedback): one session, continued up to ROUNDS times with vacant's own
  feedback (finding ids, path:line, the step that introduced each; vacant/attribute/stop.py feedback_text).

Every arm may run the agent at most ROUNDS + 1 times, and the same checks decide when to stop;
only the words sent back differ. PROMPT_SUFFIX is appended to every task's prompt in every arm.
"""

from __future__ import annotations

from dataclasses import dataclass

ARM_NAMES = ("rs", "rf", "rl")
GENERIC_FEEDBACK = "The checks still fail. Fix your work and try again."
PROMPT_SUFFIX = ("\n\nThe acceptance checks are listed in vacant.toml in this directory; they run when you "
                 "finish. Work only inside this directory.")


@dataclass(frozen=True)
class Arm:
    name: str
    title: str
    feedback: str  # what the plan says the agent is told (preregistered)

    def attempts(self, rounds: int) -> int:
        """Fresh sessions per cell: rs resamples, the feedback arms continue one session."""
        return rounds + 1 if self.name == "rs" else 1

    def do_args(self, rounds: int) -> list[str]:
        """The `vacant do` options of one attempt."""
        if self.name == "rs":
            return ["--rounds", "0"]
        if self.name == "rf":
            return ["--rounds", str(rounds), "--feedback-text", GENERIC_FEEDBACK]
        return ["--rounds", str(rounds)]


ARMS = {
    "rs": Arm("rs", "resample (no feedback)", "none: a fresh session from the seed instead"),
    "rf": Arm("rf", "generic feedback", GENERIC_FEEDBACK),
    "rl": Arm("rl", "vacant's located feedback", "vacant's Stop feedback (finding ids, path:line, introducing step)"),
}


def parse_arms(text: str) -> list[str]:
    """`rs,rf,rl` -> the arm names, in the canonical order; unknown or repeated names are refused."""
    names = [part.strip().lower() for part in text.split(",") if part.strip()]
    unknown = [n for n in names if n not in ARMS]
    if unknown:
        raise ValueError(f"unknown arm {unknown[0]!r}: the arms are {', '.join(ARM_NAMES)}")
    if len(set(names)) != len(names) or not names:
        raise ValueError("--arms names each arm once, e.g. rs,rf,rl")
    return [n for n in ARM_NAMES if n in names]
