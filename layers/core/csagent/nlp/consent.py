"""Is a message the answer to "shall I go ahead?": a model trained on customers' replies.

The word lists of `nlp.confirmation` know the short answers ("yes", "nah leave it"); customers
also write "yessir do it", "ok fine, just do it already", "Yes, is correct, please make it" or
"hold off, I need to ask my wife first", and mix an answer with a new request ("yes but only the
lamp"). This model (`nlp.text_models`) reads the whole reply as `yes`, `no` or `other` (a new or
changed request, a question, anything that decides nothing), trained on `data/consent.jsonl`:
877 replies to a proposed change written by a helper who had read neither the code nor any
evaluation set.

The caller (`understanding.consent_to_pending`) trusts the reading only at
`CONSENT_MIN_PROBABILITY` or above, and still checks what the reply names (another order, an
address, other items): a model never turns a new request into consent.
"""

from __future__ import annotations

from functools import lru_cache

from csagent.nlp.text_models import TextModelReader

#: The least probability at which the model's reading is used, chosen by 5-fold cross-validation
#: over `data/consent.jsonl` (`python -m devstack.text_model_cv consent`: a "yes" read wrongly costs
#: five times a missed answer, since it would carry out a change the customer did not agree to).
#: The folds chose 0.7 or 0.6 (gains 712 and 709 over all held-out readings: 0.7, the safer). Held
#: out, the model alone reads 755 of the 877 replies right and 5 as a yes wrongly; the word lists
#: alone 662 right and 40 wrong yeses; the bare-answer lists, then the model, then the lean of the
#: words (as `consent_to_pending` reads, before its checks) 812 and 10.
CONSENT_MIN_PROBABILITY = 0.7


@lru_cache(maxsize=1)
def get_consent_reader() -> TextModelReader:
    """The process-wide reader on the shared embedder: `read(text)` -> ("yes"|"no"|"other", p)."""
    return TextModelReader("consent", "consent.jsonl")
