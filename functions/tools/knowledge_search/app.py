"""Tool Lambda: knowledge search (policies, warranty terms, manuals, FAQ; hybrid search with citations).

Thin by design: the shape every tool Lambda shares is `csagent.tools.lambda_entry`.
"""

from __future__ import annotations

from csagent.tools.knowledge_search import prepare, run
from csagent.tools.lambda_entry import make_tool_handler

handler = make_tool_handler("knowledge_search", run, env="KnowledgeSearchEnv", prepare=prepare)
