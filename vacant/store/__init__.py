"""What is kept: content-addressed objects, the workspace index and scanner, states, the step log, runs read back, reputation."""
