"""The gate's closed lists as docs/ASKS.md: the fates of a card, the codes of a denied ACT action, the questions the Stop asks the person, the shipped ACT rules, the fixed sentences."""

from __future__ import annotations

from vacant.core.docgen import GeneratedDoc
from vacant.policy.gate.asks.book import FATES
from vacant.policy.gate.asks.consult import CODES, DECLINED_WHY, WHY
from vacant.policy.gate.asks.questions import QUESTION_KINDS
from vacant.policy.gate.rules import MODE_REFUSAL
from vacant.policy.shipped import CODE_RULES, DEFAULT_RULES

# -- the generated doc ----------------------------------------------------------------------------


def render_doc() -> str:
    lines = [
        "# The gate's closed lists",
        "",
        DOC.header(),
        "See docs/GATE.md for how the gate works.",
        "",
        "## Fates of a card",
        "",
        "| fate | meaning |",
        "|---|---|",
    ]
    lines += [f"| `{name}` | {meaning} |" for name, meaning in FATES.items()]
    lines += ["", "## Codes of a denied ACT action", "", "| code | meaning |", "|---|---|"]
    lines += [f"| `{name}` | {meaning} |" for name, meaning in CODES.items()]
    lines += ["", "## Questions the Stop asks the person", "",
              "A card with `question` set is about one exact change, asked once and answered once (signed; only the "
              "person's own `vacant approve` counts), never spent: `approved` reads accepted, `declined` rejected "
              "(docs/CONTRACT.md, \"Questions for the person\").", "", "| question | meaning |", "|---|---|"]
    lines += [f"| `{name}` | {meaning} |" for name, meaning in QUESTION_KINDS.items()]
    lines += ["", "## Shipped ACT rules", "",
              "Remove one with `remove = [\"NAME\"]` in `[gate]`; regexes are searched in each simple command "
              "of a shell line, in its normal form (whitespace and quoting normalised).", "",
              "| name | matches | may change |", "|---|---|---|"]
    for rule in DEFAULT_RULES:
        pattern = rule.command.pattern.replace("|", "\\|")
        lines.append(f"| `{rule.name}` | `{pattern}` | {rule.why} |")
    for name, why in CODE_RULES.items():
        lines.append(f"| `{name}` | (in code, see docs/GATE.md) | {why} |")
    lines += ["", "## Fixed sentences", "",
              "`why` of every needs-confirm payload (byte-identical on every call):", "", "> " + WHY, "",
              "`why` of a declined action:", "", "> " + DECLINED_WHY, "",
              "Writing an arm without a mode line:", "", "> " + MODE_REFUSAL.format(path="arms/x.sh"), ""]
    return "\n".join(lines)



DOC = GeneratedDoc("ASKS.md", render_doc, ("vacant/policy/gate/asks/book.py", "vacant/policy/gate/asks/consult.py",
                                             "vacant/policy/gate/asks/questions.py", "vacant/policy/shipped.py"))
