"""The Stop pipeline: replay on rebuilt states, the flip, lineage, grading, feedback, the report."""
