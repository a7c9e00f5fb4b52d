"""Tools the planner dispatches. Each takes a `Task` and a `ToolContext` and returns a
`ToolResult`; none raises."""
