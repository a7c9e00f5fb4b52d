"""Human handoff: when a turn goes to a person (`triggers`), what the person gets (`package`),
where it is kept and announced (`repository`: DynamoDB handoffs table, SQS handoff queue) and
the use cases of the graph and the agents' desk (`service`).

Import the submodules you need; this package imports nothing heavy at import time.
"""
