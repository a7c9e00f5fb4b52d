"""Human approval of consequential actions (refunds above a threshold...): the graph creates a
pending approval and pauses; an agent approves or rejects it; the graph resumes with the
decision. `models` (the record and its states), `repository` (DynamoDB), `service` (use cases).
"""
