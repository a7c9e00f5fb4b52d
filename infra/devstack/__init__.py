"""Local-stack tooling: never shipped to Lambda."""
