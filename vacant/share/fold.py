"""The team's reviews folded into the reputation figures, and where each count came from.

Contract: the figures count the union of this machine's reputation table and the verified
reviews on the repository's `refs/vacant/authors/*`. A review is identified by what it says
(cell, score, weight, run, finding); one the table and the team both hold counts once. Several
identical reviews of one run (two green Stops) are kept: for each identity the larger of the two
multiplicities counts, so syncing any number of times never inflates a figure. Source and
integration-coverage counts stay local (they are not shared).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vacant.share.gitstore import GitStore
from vacant.share.team import Counted, read_team
from vacant.store import reputation
from vacant.store.reputation import CellStats, ReviewRow


@dataclass
class Provenance:
    mode: str  # "team" or "local"
    local: int = 0  # reviews in this machine's table
    team: int = 0  # verified reviews on the repository's refs
    overlap: int = 0  # team reviews also in the local table, counted once
    counted: int = 0  # reviews behind the figures
    rejected: int = 0  # shared records left out (`vacant sync --status` says why)
    authors: list[dict[str, Any]] = field(default_factory=list)  # {author, name, reviews}
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def sentence(self) -> str:
        if self.mode == "local":
            return f"reviews: {self.local} from this machine only (--local)"
        text = (f"reviews: {self.counted} counted = {self.local} from this machine + {self.team} from the team's "
                f"records ({len(self.authors)} author(s)), {self.overlap} in both counted once")
        if self.rejected:
            text += f"; {self.rejected} shared record(s) rejected (vacant sync --status)"
        return text + (f"; {self.note}" if self.note else "")


def team_row(counted: Counted) -> ReviewRow:
    body = counted.body
    cell = body["cell"]
    return ReviewRow((cell["platform"], cell["agent_definition"], cell["model"], cell["task_family"]),
                     float(body["score"]), float(body["weight"]), body["run"], body["finding"])


def union_rows(local: list[ReviewRow], team: list[ReviewRow]) -> tuple[list[ReviewRow], int]:
    """Multiset union by identity (max of the multiplicities); and how many team rows were local."""
    mine, theirs = Counter(local), Counter(team)
    rows = []
    overlap = 0
    for row in mine.keys() | theirs.keys():
        rows += [row] * max(mine[row], theirs[row])
        overlap += min(mine[row], theirs[row])
    return rows, overlap


def folded_stats(root: Path | None, local_only: bool = False,
                 path: Path | None = None) -> tuple[list[CellStats], Provenance]:
    local = reputation.review_rows(path)
    if local_only:
        return reputation.cell_stats(path), Provenance("local", local=len(local), counted=len(local))
    store = GitStore(root) if root is not None else None
    if root is None or store is None or not store.is_repository():
        return reputation.aggregate(local), Provenance("team", local=len(local), counted=len(local),
                                                       note="not in a git repository: no team records")
    view = read_team(root, store)  # every kind: the rejected count is the one `vacant sync --status` gives
    team = [team_row(c) for c in view.reviews.values()]
    rows, overlap = union_rows(local, team)
    authors = [{"author": a, "name": view.keys.keys[a].name if a in view.keys.keys else None, "reviews": n}
               for a, n in sorted(view.per_author.items(), key=lambda item: -item[1])]
    note: str | None = None if view.reviews or view.rejected else "no shared records yet: vacant sync fetches the team's"
    return reputation.aggregate(rows), Provenance("team", len(local), len(team), overlap, len(rows),
                                                  len(view.rejected), authors, note)
