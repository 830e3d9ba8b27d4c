"""One hook call, from the platform's process to its answer: the one room for the hook path.

- client.py: the installed door. The launcher (vacant/vacant-hook-client.py, run as `python -I -S
  …/vacant-hook-client.py PLATFORM`) and the `vacant-hook` console script both run its `main`: ask
  the workspace's daemon, else answer in-process, else the last resort (the registry's deny table,
  vacant/platforms/deny.py). It imports builtins only at its top: it is loaded as a top-level
  module, without this package.
- entry.py: the in-process answer's process (environment scrub, stdin, the whole-call deadline,
  the exit code); `python -m vacant.hook.entry PLATFORM` runs it alone.
- call.py: the one answer to a call, whichever door it came in by (the in-process entry and the
  daemon, vacant/daemon/server.py), and the one rule for a call vacant fails on (`fail_closed`).
- paths.py: where a workspace's daemon keeps its files, and how to start one detached.
- bundle.py: the hot bundle's writer.
- lean.py: the import-time tricks of the hook path in one room (pathlib without its rare
  modules, the hot bundle's reader), switched on once by the client's slow path; its docstring
  lists every trick, the ones kept elsewhere too, with what each saves.

This package's __init__ imports nothing: the fallback imports it before the hot bundle serves
the rest.
"""
