"""The conversation graph: one customer turn, one node per module in `nodes/`."""
