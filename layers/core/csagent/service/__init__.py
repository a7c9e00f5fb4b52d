"""The conversation service: the one use case the router handler calls, in four parts.

`conversation.py` (`ConversationService`: checks who owns the session, takes the turn lease, runs
the graph on the session's checkpoint thread, resumes turns paused for an approval or stopped
mid-turn, and records the outcome), `schemas.py` (the bodies it takes and returns, also the
OpenAPI document's), `outcome.py` (the graph's final state as those bodies) and `checkpoints.py`
(what a session's latest checkpoint says: its head, a paused approval, a crashed turn). None of
it knows HTTP or Lambda events; the port it needs for sessions is `csagent.ports.Sessions`.
"""
