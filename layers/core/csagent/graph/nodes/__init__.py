"""One node per module, each named by a verb."""
