"""Fixtures for the local model tier tests: the MiniLM model is loaded once per module."""

from __future__ import annotations

import pytest

from csagent.nlp.embeddings import MiniLMEmbedder
from csagent.nlp.intents import IntentClassifier

# A slice of the store catalogue, in the shape callers pass to `csagent.nlp.entities`.
CATALOGUE = [
    {"product_id": "6992792935", "name": "Headphones",
     "options": {"type": ["in-ear", "on-ear", "over-ear"], "connectivity": ["wired", "wireless"],
                 "color": ["black", "blue", "red", "white"]}},
    {"product_id": "8310926033", "name": "Water Bottle",
     "options": {"capacity": ["1000ml", "500ml", "750ml"],
                 "material": ["glass", "plastic", "stainless steel"],
                 "color": ["black", "blue", "green", "red"]}},
    {"product_id": "9523456873", "name": "T-Shirt",
     "options": {"color": ["black", "blue", "purple", "red"], "size": ["L", "M", "S", "XL", "XXL"],
                 "material": ["cotton", "polyester"], "style": ["crew neck", "v-neck"]}},
    {"product_id": "6938111410", "name": "Running Shoes",
     "options": {"size": ["10", "8", "9"], "color": ["black", "red", "white", "yellow"]}},
    {"product_id": "7314138884", "name": "Sunglasses",
     "options": {"frame color": ["black", "brown", "silver"],
                 "lens color": ["black", "blue", "brown", "green"]}},
    {"product_id": "3377618313", "name": "Action Camera", "options": {"resolution": ["1080p", "4K", "5K"]}},
    {"product_id": "8940227892", "name": "Digital Camera", "options": {"zoom": ["10x", "3x", "5x"]}},
    {"product_id": "6945232052", "name": "Smart Watch", "options": {"color": ["black", "gold", "silver"]}},
    {"product_id": "4794339885", "name": "Office Chair",
     "options": {"color": ["black", "blue", "gray", "red"]}},
    {"product_id": "8600330539", "name": "Bookshelf",
     "options": {"height": ["3 ft", "4 ft", "5 ft", "6 ft"]}},
]


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    """A real MiniLM embedder, loaded once for the test module."""
    return MiniLMEmbedder()


@pytest.fixture(scope="module")
def classifier(embedder: MiniLMEmbedder) -> IntentClassifier:
    """The intent classifier on the shipped examples and calibration."""
    return IntentClassifier(embedder=embedder)


@pytest.fixture()
def catalogue() -> list[dict]:
    return [dict(p) for p in CATALOGUE]
