"""Adapters: the only modules that talk to Neo4j, AWS or model endpoints."""
