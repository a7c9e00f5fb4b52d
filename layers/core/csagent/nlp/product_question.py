"""Does a question about a product ask what the store's catalogue knows (its price, whether it is in
stock, which versions there are, what a listed option of a version is) or what its documents say
(how to use, care for or fix it, what it suits, a fact the options do not list)? A model trained on
customers' questions.

The planner answers a product question from the catalogue's templates unless it is one the
product's documents answer (`planning`: `documents_first`). The nearest template decided that
alone before: a question close to no catalogue template is the documents'. It read "what is the
weight limit of the office chair?" as close enough to a catalogue question to answer with the
chair's prices, and did no better than 0.76 balanced accuracy held out on the 348 questions it was
tuned on (`python -m devstack.aspect_threshold`). This model (`nlp.text_models`) reads the question
as `catalogue` or `documents`, trained on `data/product_questions.jsonl`: 1,300 questions about the
store's 50 products written for it by helpers who had read neither the code nor any evaluation
set, more than half of each label look-alikes of the other ("are the earbuds on mine IPX4 or
IPX7?" against "can I swim laps with my IPX7 earbuds?"; "how much is the 2L kettle" against "how
much water do I put in the coffee maker for 4 cups").

`understanding_local.asks_the_documents` takes the model's reading when its label's probability is
`MIN_PROBABILITY` or above; below it (or without the model) the nearest template decides as before.
"""

from __future__ import annotations

from functools import lru_cache

from csagent.nlp.text_models import TextModelReader

#: The least probability at which a reading is used, chosen by 5-fold cross-validation over the file
#: (`python -m devstack.text_model_cv product_question`; a wrong reading of either label answers from
#: the wrong source and costs what a missed one gains). Every fold chose 0.4, the lowest tried: with
#: two labels the model's reading is always used (2026-12-04). Held out, it reads 1,229 of the 1,300
#: questions right (0.945), the nearest template 1,011 (0.778).
MIN_PROBABILITY = 0.4


@lru_cache(maxsize=1)
def get_product_question_reader() -> TextModelReader:
    """The process-wide reader on the shared embedder: `read(text)` -> ("catalogue"|"documents", p)."""
    return TextModelReader("product_question", "product_questions.jsonl")


@lru_cache(maxsize=256)
def documents_answer(text: str) -> bool | None:
    """True when the model reads the question as one the product's documents answer at the chosen
    probability, False when it reads one the catalogue answers; None when it is unsure or
    unavailable (the nearest catalogue template decides then)."""
    return get_product_question_reader().reads_as(text, "documents", MIN_PROBABILITY)
