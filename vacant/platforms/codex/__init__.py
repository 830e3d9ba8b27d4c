"""Codex CLI: payloads (hot path), the platform object, its app-server client, hook trust, doctor."""
