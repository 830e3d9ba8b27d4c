"""vacant: know who did what in a coding-agent run, and find the step that did it."""

__version__ = "0.1.0"
