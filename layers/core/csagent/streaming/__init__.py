"""Streaming a turn: progress while the graph works, the answer once it has decided.

`progress` turns LangGraph's own "updates" stream into customer-facing progress events;
`sse` writes a turn's events as server-sent events. The turn itself (auth, lease, rate limit,
crash recovery, approvals, budget) is `csagent.service.conversation.ConversationService`, shared
with the non-streaming endpoint.
"""
