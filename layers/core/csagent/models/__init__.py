"""Generative chat models, chosen from configuration strings (`csagent.models.providers`).

Nothing is imported here on purpose: provider SDKs (langchain-aws, langchain-openai) are loaded
only when a model is built, because import cost is a Lambda cold-start metric.
"""
