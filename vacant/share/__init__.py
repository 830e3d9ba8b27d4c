"""Sharing attribution and reputation through the repository's own git remote (`vacant sync`).

records   the typed run and review records and their canonical, signed JSON (docs/SHARE.md)
signing   Ed25519 keys: the person's own, and the team's trusted keys committed in the repository
gitstore  git plumbing: objects, trees, commits and refs under refs/vacant/ only
publish   one's own runs -> signed records -> one's own author ref
team      reading every author ref back: verified, deduplicated, with the rejected listed
teamkey   which repository, and what a cached team view is built from (light: the warm path)
cache     the state directory's files: plain JSON, and sealed (HMAC) caches of what was verified
sync      fetch -> union merge -> push, retried on rejection, never forced
fold      the team's reviews folded into the reputation table's figures
lines     a run's line data for its record: keyed line hashes and edit scripts, never the lines
teamblame `vacant blame --team`: every line's step, from local runs and the team's run records

Nothing here is imported by the hook (the hot path); `vacant sync`, the reputation commands
and `vacant blame --team` are its only entries.
"""
