"""The Stop-time contract: `vacant.toml`'s checks, run and read, the person's flags, hints and red-first."""
