"""The local model tier: deterministic NLP with no generative model.

`embeddings` (all-MiniLM-L6-v2 on onnxruntime), `intents` (example-based intent classification
with a calibrated out-of-scope threshold and a Chinese keyword layer), `clauses` (splitting
compound messages into requests), `entities` (order ids, tracking numbers, emails, zip codes,
addresses, products and references), `replies` (templated replies in English and Chinese).

Nothing here does I/O at import: models and data files load on first use.
"""
