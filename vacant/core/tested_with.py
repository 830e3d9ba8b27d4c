"""The versions of the libraries the hook path stands on that this release was tested with.

Written by scripts/lock from locks/run.txt (the lock the tests install; a test fails when the two
differ): xxhash hashes every stored file, and the watch daemon subclasses watchdog's inotify
classes, whose internals changed within one minor release (7.1.0 -> 7.1.1). `vacant doctor` names
an installed version other than these. pyproject.toml keeps the ranges a user may install."""

TESTED_WITH: dict[str, str] = {
    "watchdog": "7.1.1",
    "xxhash": "4.1.0",
}
