"""The per-workspace watch daemon: a hot index, hook calls answered over a unix socket and HTTP.

server (the listeners and the request rules), watcher (watchdog + the dirty set), cookie (the
Watchman cookie sync), scanner (a Scanner that scans only what the watcher saw change),
lifecycle (one instance, pid/socket files, start detached, stop), pointer (the socket's pointer
in the state directory). The client, its fallback and the daemon's file paths are the hook call's
(vacant/hook/).
"""
