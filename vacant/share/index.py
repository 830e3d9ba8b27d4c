"""Manifest indexes: what a publication's format 2 manifest says of its records, and reading an
author's ref from its manifests alone.

Contract:
- Writing (`manifest_body`): a publication's manifest indexes each record it covers (a run's
  `run`, `through_seq`, whether it has line data and the paths it names; a review's whole body),
  with the record's name and git blob id, and names the manifests it came after. It claims the
  whole ref (`whole`, with the ids of `runs/` and `reviews/`) only when the manifests reachable
  through `after` then index every record on the ref: the publisher checks that first
  (vacant/share/publish.py).
- Reading (`tops`, `whole_ref`, `indexed`): an author ref whose tree is regular (only `runs/`,
  `reviews/` and `manifests/<2 hex>/<62 hex>` at the top, read with a few `cat-file` calls for
  every author at once, never listing a record) and whose `runs/` and `reviews/` are the trees a
  valid manifest claims is counted from the indexes reachable from that manifest. Each of those
  manifests is verified as any record is (name, shape, author, trust, signature:
  vacant/share/team.py); nothing here trusts an index its signature does not cover.
- An index row is what the per-record path (vacant/share/team.py) keeps of the record it names,
  and a test holds the two to the same view on generated histories; a git blob id in a signed
  index binds the row to the record's bytes, as the record's sha256 name binds its path.
- Anything else (an irregular tree, no claim that matches, a chain with a gap, an index whose
  lists disagree in length or point past `cells`/`paths`) is not an error: the reader lists the
  ref and counts each record from any index that names its exact blob, else verifies it alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NamedTuple

from vacant.share.gitstore import GitStore
from vacant.share.records import MAX_INDEXED_PATHS, canonical

TOP_DIRS = ("manifests", "reviews", "runs")
_FAN = re.compile(rb"^[0-9a-f]{2}$")
_REST = re.compile(rb"^[0-9a-f]{62}$")
_TREE_MODE, _BLOB_MODE = b"40000", b"100644"


@dataclass(frozen=True)
class Top:
    """An author commit's tree, as far as the fast path needs it: the ids of its top directories
    and its manifests (tree path, blob id), in tree order; None from `tops` when it is irregular."""
    trees: dict[str, str]
    manifests: list[tuple[str, str]]


class Row(NamedTuple):  # a tuple, not a dataclass: an index holds tens of thousands
    """One record as an index names it: kind, name (sha256), git blob id, and the view's summary."""
    kind: str
    name: str
    oid: str
    body: dict[str, Any]


# -- writing --------------------------------------------------------------------------------------

def manifest_body(rows: list[Row], after: list[str], trees: dict[str, str] | None) -> dict[str, Any]:
    """The JSON body of a format 2 manifest indexing `rows` (`trees`: the ref's `runs`/`reviews`
    tree ids, when the chain then indexes the whole ref; None: no claim)."""
    cells: dict[str, int] = {}
    cell_list: list[dict[str, Any]] = []
    paths = sorted({p for row in rows if row.kind == "run" for p in row.body["paths"] or ()})
    where = {path: n for n, path in enumerate(paths)}
    runs: dict[str, list[Any]] = {k: [] for k in ("name", "oid", "run", "through_seq", "lines", "path_counts")}
    flat: list[int] = []
    reviews: dict[str, list[Any]] = {k: [] for k in ("name", "oid", "run", "seq", "cell", "score", "weight", "finding")}
    for row in sorted(rows, key=lambda r: (r.kind, r.name)):
        body = row.body
        if row.kind == "run":
            named = body["paths"]
            values = [row.name, row.oid, body["run"], body["through_seq"], body["lines"],
                      None if named is None else len(named)]
            for key, value in zip(runs, values):
                runs[key].append(value)
            flat += sorted(where[p] for p in named or ())
        elif row.kind == "review":
            key = canonical(body["cell"]).decode()
            if key not in cells:
                cells[key] = len(cell_list)
                cell_list.append(body["cell"])
            values = [row.name, row.oid, body["run"], body["seq"], cells[key], body["score"], body["weight"],
                      body["finding"]]
            for name, value in zip(reviews, values):
                reviews[name].append(value)
    claim = trees is not None
    return {"records": [], "after": sorted(after), "whole": claim,
            "runs_tree": trees.get("runs") if trees else None, "reviews_tree": trees.get("reviews") if trees else None,
            "cells": cell_list, "paths": paths, "runs": {**runs, "paths": flat}, "reviews": reviews}


# -- reading --------------------------------------------------------------------------------------

def _entries(data: bytes, width: int) -> list[tuple[bytes, bytes, str]] | None:
    """A git tree object's entries (mode, name, hex id), or None when it does not parse."""
    found = []
    position = 0
    while position < len(data):
        space = data.find(b" ", position)
        nul = data.find(b"\0", space + 1)
        if space < 0 or nul < 0 or nul + 1 + width > len(data):
            return None
        found.append((data[position:space], data[space + 1:nul], data[nul + 1:nul + 1 + width].hex()))
        position = nul + 1 + width
    return found


def tops(store: GitStore, commits: list[str]) -> dict[str, Top | None]:
    """Each commit's `Top`, in three `cat-file` calls whatever the number of commits (None: an
    irregular tree, left to the listing path); `commits`: full object ids, as refs name them."""
    if not commits:
        return {}
    width = len(commits[0]) // 2  # an id's bytes: the repository's object format, without asking git
    roots = store.read_objects([f"{commit}^{{tree}}" for commit in commits])
    found: dict[str, Top | None] = {}
    fans: dict[str, str] = {}  # commit -> its manifests tree id
    for commit, obj in zip(commits, roots):
        entries = _entries(obj[1], width) if obj is not None and obj[0] == "tree" else None
        if entries is None or any(mode != _TREE_MODE or name.decode() not in TOP_DIRS for mode, name, _ in entries):
            found[commit] = None
            continue
        trees = {name.decode(): oid for _, name, oid in entries}
        found[commit] = Top(trees, [])
        if "manifests" in trees:
            fans[commit] = trees["manifests"]
    fan_trees = _read_trees(store, list(fans.values()), width)
    leaves: dict[str, list[tuple[str, str]]] = {}
    for commit, fan in fans.items():
        entries = fan_trees.get(fan)
        if entries is None or any(mode != _TREE_MODE or not _FAN.match(name) for mode, name, _ in entries):
            found[commit] = None
            continue
        leaves[commit] = [(name.decode(), oid) for _, name, oid in entries]
    leaf_trees = _read_trees(store, sorted({oid for pairs in leaves.values() for _, oid in pairs}), width)
    for commit, pairs in leaves.items():
        manifests = []
        for fan, oid in pairs:
            entries = leaf_trees.get(oid)
            if entries is None or any(mode != _BLOB_MODE or not _REST.match(name) for mode, name, _ in entries):
                found[commit] = None
                break
            manifests += [(f"manifests/{fan}/{name.decode()}", blob) for _, name, blob in entries]
        else:
            top = found[commit]
            assert top is not None
            found[commit] = Top(top.trees, manifests)
    return found


def _read_trees(store: GitStore, oids: list[str], width: int) -> dict[str, list[tuple[bytes, bytes, str]] | None]:
    unique = sorted(set(oids))
    objects = store.read_objects(unique)
    return {oid: _entries(obj[1], width) if obj is not None and obj[0] == "tree" else None
            for oid, obj in zip(unique, objects)}


def indexed(body: dict[str, Any], keys: list[tuple[Any, ...]] | None = None) -> list[Row] | None:
    """The rows a valid manifest's body indexes ([] for format 1, or one without an index); None
    when its lists disagree in length or point past `cells` or `paths` (then it indexes nothing).
    `keys`: only what the figures need: its reviews are not made rows but put there as what each
    says (`team.review_key`), and its runs are checked as above but not made rows at all."""
    runs, reviews = body.get("runs"), body.get("reviews")
    rows: list[Row] = []
    if runs is not None:
        paths, flat = body.get("paths") or [], runs["paths"]
        columns = [runs[k] for k in ("name", "oid", "run", "through_seq", "lines", "path_counts")]
        counts = [n for n in runs["path_counts"] if n is not None]
        if len({len(c) for c in columns}) > 1 or sum(counts) != len(flat) or (flat and max(flat) >= len(paths)) \
                or (counts and max(counts) > MAX_INDEXED_PATHS):
            return None
        start = 0
        for name, oid, run, through, lines, count in zip(*columns) if keys is None else ():
            named = None if count is None else [paths[n] for n in flat[start:start + count]]
            start += count or 0
            rows.append(Row("run", name, oid, {"run": run, "through_seq": through, "lines": lines, "paths": named}))
    if reviews is not None:
        cells = body.get("cells") or []
        columns = [reviews[k] for k in ("name", "oid", "run", "seq", "cell", "score", "weight", "finding")]
        if len({len(c) for c in columns}) > 1 or any(n >= len(cells) for n in set(reviews["cell"])):
            return None
        if keys is not None:  # made by zip and map alone: no Python step per review
            of = [(c["platform"], c["agent_definition"], c["model"], c["task_family"]) for c in cells]
            run, seq, cell, score, weight, finding = columns[2:]
            keys += zip(run, seq, map(of.__getitem__, cell), score, weight, finding)
            return rows
        rows += [Row("review", name, oid, {"cell": cells[cell], "finding": finding, "run": run, "score": score,
                                           "seq": seq, "weight": weight})
                 for name, oid, run, seq, cell, score, weight, finding in zip(*columns)]
    return rows


def whole_ref(top: Top, manifests: dict[str, dict[str, Any]], keys: list[tuple[Any, ...]] | None = None) -> list[Row] | None:
    """The rows of an author ref counted from its manifests alone: `manifests` are its valid ones
    (name -> body); the rows reachable through `after` from one whose claim is exactly the ref's
    `runs/` and `reviews/`, or None when none is (or its chain has a gap or a broken index).
    `keys`: as `indexed` (filled only when rows are returned)."""
    claims = sorted(name for name, body in manifests.items()
                    if body.get("whole") is True and body.get("runs_tree") == top.trees.get("runs")
                    and body.get("reviews_tree") == top.trees.get("reviews"))
    for claim in claims:
        found: list[tuple[Any, ...]] | None = [] if keys is not None else None
        rows = chain_rows(claim, manifests, found)
        if rows is not None:
            if keys is not None and found is not None:
                keys += found
            return rows
    return None


def chain_rows(start: str, manifests: dict[str, dict[str, Any]],
               keys: list[tuple[Any, ...]] | None = None) -> list[Row] | None:
    """The rows the manifests reachable from `start` through `after` index (None: a gap, or a
    broken index); `keys`: as `indexed`."""
    seen, todo, rows = {start}, [start], []
    while todo:
        body = manifests.get(todo.pop())
        found = indexed(body, keys) if body is not None and body.get("after") is not None else None
        if body is None or found is None:
            return None
        rows += found
        for earlier in body["after"]:
            if earlier not in seen:
                seen.add(earlier)
                todo.append(earlier)
    return list({row.name: row for row in rows}.values())  # a record two manifests index (after a merge) once
