"""Seed the store graph in Neo4j: the built-in demo store or a tau-retail-shaped dataset."""
