"""Guardrails: input screening (prompt injection, scope), rate limiting, the output guard, and
PII masking for logs. Import the submodules; nothing here does I/O at import."""
