"""Hook calls turned into steps, reads and change deltas (the recorder), and the gate's glue to it."""
