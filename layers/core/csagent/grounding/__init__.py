"""Grounding: what a customer's words refer to in their own orders, payment methods and the
catalogue's variants, before a request is planned (`../shared/brief/understanding.md`, step 3).

`model` holds the view grounding reads (built by `adapters.customer_view`), `options` finds option
words from the catalogue's own values, `resolve` matches orders, payment methods, item changes and
returned items, and `frame` fills a request's frame, listing candidates when several fit; `asking`
keeps the words of the questions it asks as phrases, said in the customer's language.
"""
