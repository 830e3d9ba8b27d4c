"""Showing a recorded run to a person: line blame, workspace restore, the HTML run view and the
Markdown findings table. Read-only over the step log and the object store; nothing here writes
inside the live workspace."""
