"""The team's reviews folded into the reputation figures, and where each count came from.

Contract: the figures count the union of this machine's reputation table and the verified
reviews on the repository's `refs/vacant/authors/*`. A review is identified by what it says
(cell, score, weight, run, finding); one the table and the team both hold counts once. Several
identical reviews of one run (two green Stops) are kept: for each identity the larger of the two
multiplicities counts, so syncing any number of times never inflates a figure. Source and
integration-coverage counts stay local (they are not shared).

Speed: the team's side is folded once per state of the refs into a `TeamSummary` (per-cell sums,
and the identity of every team row, grouped by cell, score and weight), sealed beside the team view under
the same key (vacant/share/team.py), so a warm `vacant reputation` reads neither the records nor
the view: it adds to the team's sums the local rows the team does not hold (as many times as the
local table holds them more often), which is the same multiset union as `union_rows`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vacant.share.cache import load_sealed, save_sealed
from vacant.share.gitstore import GitError, GitStore
from vacant.share.teamkey import cache_dir, view_key
from vacant.store import reputation
from vacant.store.reputation import CellStats, ReviewRow

if TYPE_CHECKING:
    from vacant.share.team import Counted, TeamView

KINDS = ("run", "review")  # every kind: the rejected count is the one `vacant sync --status` gives


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


Identity = tuple[tuple[str, str, str, str], float, float, str | None, str | None]  # a ReviewRow's fields


def _identity(body: dict[str, Any]) -> Identity:
    cell = body["cell"]
    return ((cell["platform"], cell["agent_definition"], cell["model"], cell["task_family"]),
            float(body["score"]), float(body["weight"]), body["run"], body["finding"])


def team_row(counted: Counted) -> ReviewRow:
    return ReviewRow(*_identity(counted.body))


def union_rows(local: list[ReviewRow], team: list[ReviewRow]) -> tuple[list[ReviewRow], int]:
    """Multiset union by identity (max of the multiplicities); and how many team rows were local."""
    mine, theirs = Counter(local), Counter(team)
    rows = []
    overlap = 0
    for row in mine.keys() | theirs.keys():
        rows += [row] * max(mine[row], theirs[row])
        overlap += min(mine[row], theirs[row])
    return rows, overlap


Group = tuple[tuple[str, str, str, str], float, float]  # a team row's cell, score and weight


def row_text(run: str | None, finding: str | None) -> str:
    """The rest of a row's identity (what `union_rows` compares), as one string."""
    return f"{run!r}\0{finding!r}"


@dataclass
class TeamSummary:
    """The team's verified reviews, folded: what the figures need of them and nothing else."""
    sums: dict[tuple[str, str, str, str], list[float]]  # per cell: [reviews, weights, score * weight]
    groups: dict[Group, list[str]]  # each team row's `row_text` by its cell, score and weight (k times if held k times)
    team: int
    rejected: int
    authors: list[dict[str, Any]]
    _counts: dict[Group, Counter[str]] = field(default_factory=dict, repr=False, compare=False)

    def multiplicity(self, row: ReviewRow) -> int:
        """How many team rows have exactly this row's identity."""
        group = (row.cell, row.score, row.weight)
        counts = self._counts.get(group)
        if counts is None:
            counts = self._counts[group] = Counter(self.groups.get(group, ()))
        return counts[row_text(row.run, row.finding)]

    def to_json(self) -> dict[str, Any]:
        """Each group's texts as one string, sorted and joined by newlines (a `row_text` holds none:
        both halves are reprs): one JSON string to write and read, not tens of thousands."""
        return {"sums": [[list(cell), *total] for cell, total in sorted(self.sums.items())],
                "groups": [[list(cell), score, weight, "\n".join(sorted(texts))]
                           for (cell, score, weight), texts in sorted(self.groups.items())],
                "team": self.team, "rejected": self.rejected, "authors": self.authors}

    @classmethod
    def from_json(cls, data: Any) -> TeamSummary | None:
        try:
            sums = {(str(c[0]), str(c[1]), str(c[2]), str(c[3])): [int(n), float(w), float(g)]
                    for c, n, w, g in data["sums"]}
            groups = {((str(c[0]), str(c[1]), str(c[2]), str(c[3])), float(score), float(weight)): texts.split("\n")
                      for c, score, weight, texts in data["groups"]}  # not a string: AttributeError, no summary
            authors = [dict(a) for a in data["authors"]]
            return cls(sums, groups, int(data["team"]), int(data["rejected"]), authors)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            return None


def summarize(view: TeamView) -> TeamSummary:
    """`reputation.row_sums` of every team row and their identities by group, without making the
    rows (tens of thousands of them cost more than the sums)."""
    sums: dict[tuple[str, str, str, str], list[float]] = {}
    groups: dict[Group, list[str]] = {}
    for run, _seq, cell, score, weight, finding in view.reviews:  # team.review_key
        score, weight = float(score), float(weight)
        texts = groups.get((cell, score, weight))
        if texts is None:
            texts = groups[(cell, score, weight)] = []
        texts.append(f"{run!r}\0{finding!r}")  # row_text, inline: it runs once a team review
        total = sums.get(cell)
        if total is None:
            total = sums[cell] = [0, 0.0, 0.0]
        total[0] += 1
        total[1] += weight
        total[2] += score * weight
    authors = [{"author": a, "name": view.keys.keys[a].name if a in view.keys.keys else None, "reviews": n}
               for a, n in sorted(view.per_author.items(), key=lambda item: -item[1])]
    return TeamSummary(sums, groups, len(view.reviews), len(view.rejected), authors)


def summary_path(root: Path) -> Path:
    return cache_dir(root) / "reputation.json"


def team_summary(root: Path, store: GitStore) -> TeamSummary:
    """The team's side of the figures for the refs as they are now: sealed under the team view's
    key, else folded from the view (itself cached or verified again) and sealed."""
    keyed = view_key(store, KINDS)
    summary = TeamSummary.from_json(load_sealed(summary_path(root), keyed[0]))
    if summary is None:
        from vacant.share.team import read_team_keyed  # records and cryptography: only to build it

        view, key = read_team_keyed(root, store, KINDS, keep=False, keyed=keyed)  # the summary is all it keeps
        summary = summarize(view)
        save_sealed(summary_path(root), key, summary.to_json())
    return summary


def fold(local: list[ReviewRow], summary: TeamSummary) -> tuple[list[CellStats], int, int]:
    """The figures of the multiset union of the local rows and the team's; and how many team rows
    the local table also holds, how many rows count."""
    sums = {cell: list(total) for cell, total in summary.sums.items()}
    overlap = extra = 0
    for row, mine in Counter(local).items():
        theirs = summary.multiplicity(row)
        overlap += min(mine, theirs)
        more = mine - theirs
        if more > 0:
            total = sums.setdefault(row.cell, [0, 0.0, 0.0])
            total[0] += more
            total[1] += row.weight * more
            total[2] += row.score * row.weight * more
            extra += more
    return reputation.stats_of(sums), overlap, summary.team + extra


def folded_stats(root: Path | None, local_only: bool = False,
                 path: Path | None = None) -> tuple[list[CellStats], Provenance]:
    local = reputation.review_rows(path)
    if local_only:
        return reputation.cell_stats(path), Provenance("local", local=len(local), counted=len(local))
    store = GitStore(root) if root is not None else None
    try:
        summary = team_summary(root, store) if root is not None and store is not None else None
    except GitError:
        if store is not None and store.is_repository():
            raise
        summary = None  # asked only when git failed: a warm answer spends no git call on it
    if summary is None:
        return reputation.aggregate(local), Provenance("team", local=len(local), counted=len(local),
                                                       note="not in a git repository: no team records")
    stats, overlap, counted = fold(local, summary)
    note = None if summary.team or summary.rejected else "no shared records yet: vacant sync fetches the team's"
    return stats, Provenance("team", len(local), summary.team, overlap, counted, summary.rejected,
                             summary.authors, note)
