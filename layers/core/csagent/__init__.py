"""csagent: the domain core of the customer-service agent (shipped as the `core` Lambda layer).

Layout: `domain` (models, errors, no I/O), `ports` (protocols the core needs), `adapters`
(Neo4j, DynamoDB, models: the only modules that do I/O), `tools` (what the planner dispatches),
`graph` (the LangGraph conversation graph, one node per module), `http` (the FastAPI edge),
`nlp` (the local model tier), `config` (typed settings).
"""
