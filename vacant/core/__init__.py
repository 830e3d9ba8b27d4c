"""Vocabularies, locations, redaction, keys, atomic writes, the error log: stdlib only, imported by every layer."""
