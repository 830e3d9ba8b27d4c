"""Take a recorded run elsewhere: OpenTelemetry traces (`otlp`) and Agent Trace records
(`agent_trace`), both built from one typed model of the run (`model`).

Everything exported comes from the step log, which is redacted when written; file contents and
read contents (kept in the object store) never leave. Nothing here is imported by the hook.
"""
