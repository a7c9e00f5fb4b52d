"""Rule-based entity extraction for the local tier, one module per kind of entity.

What: `identifiers` (order ids, tracking numbers, e-mails, US zip codes), `addresses` (US postal
addresses, and words that point at the address saved on the account), `products` (product
mentions, with their options, matched against a catalogue passed in as data), `references`
("those headphones", "that order", "it": found here, resolved by the caller against the
customer's orders or the conversation), `questions` (the shape of a question: does it open like
one, does it ask about the store in general or the catalogue), `extract` (all of them over one
text) and `words` (what they share: the word lists of `data/entity_terms.json`, tokens,
singular forms).

Why rules: these entities have rigid shapes (`#W` + 7 digits, 12-digit tracking numbers, US
addresses) or come from a closed catalogue, so patterns plus fuzzy matching are exact, cheap and
explainable; no model call, no data leaves the process. Nothing here touches Neo4j: the
catalogue and the candidate products are arguments. Nothing is read at import: the word lists
load on first use.
"""
