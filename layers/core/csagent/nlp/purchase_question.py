"""Does a message about something the customer bought ask about the product itself (how it works,
what it suits, what is wrong with it) or about its order (where it is, what it cost)? A model
trained on customers' messages.

Grounding reads a clause that names a purchase as an order question when its words speak of the
order ("received", "on its way", "the hold-up"), which misreads the customers who use those words
only to say which item they mean: "for the vacuum cleaner I received in #W1, how often should I
replace the HEPA filter?", "can the speaker that is on its way to me be used in the shower?". This
model (`nlp.text_models`) reads the clause as `product` or `order`, trained on
`data/purchase_questions.jsonl`: messages written for it by helpers who had read neither the code
nor any evaluation set, at least two in five of each label look-alikes of the other (product
questions that name the delivery, order questions that name a use: "whats the holdup with my action
cam, I need it for a trip"), and on `data/purchase_questions_dev.jsonl`: the first messages of the
development set that name a product and ask one thing, labelled by what their writers asked
(`make intent-examples`; on the first file alone the model read one product question in four of
the development parts it had not learnt from as an order question).

`grounding.frame.purchase_intent` takes the model's reading when its label's probability is
`MIN_PROBABILITY` or above; below it (or without the model) the words decide as before.
"""

from __future__ import annotations

from functools import lru_cache

from csagent.nlp.text_models import TextModelReader

#: The least probability at which a reading is used, chosen by 5-fold cross-validation over the files
#: (`python -m devstack.text_model_cv purchase_question`: a `product` reading of an order question
#: answers with the product's pages instead of where the order is, and costs twice a missed one).
#: The folds chose 0.6 five times in five (2026-12-07, 2,377 messages); held out, the model reads
#: 2,269 of the 2,377 right, the words of `grounding.frame` 1,683.
MIN_PROBABILITY = 0.6


@lru_cache(maxsize=1)
def get_purchase_question_reader() -> TextModelReader:
    """The process-wide reader on the shared embedder: `read(text)` -> ("product"|"order", p)."""
    return TextModelReader("purchase_question", "purchase_questions.jsonl", "purchase_questions_dev.jsonl")


@lru_cache(maxsize=256)
def asks_about_the_product(text: str) -> bool | None:
    """True when the model reads the clause as a question about the product itself at the chosen
    probability, False when it reads one about the order; None when it is unsure or unavailable
    (the words decide then)."""
    return get_purchase_question_reader().reads_as(text, "product", MIN_PROBABILITY)
