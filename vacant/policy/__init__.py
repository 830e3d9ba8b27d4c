"""What is right and what may run: the PreToolUse gate (`gate/`) and the Stop-time contract (`contract/`), independent of each other."""
