"""Domain models and errors: pure data, no I/O."""
