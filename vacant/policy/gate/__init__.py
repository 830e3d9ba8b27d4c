"""The PreToolUse gate: READ passes, ACT waits for a person's answer (the rules, the shell reader, the ask book)."""
