"""Grounding: what the customer's words refer to in their own orders, payment methods and the
catalogue. Pure functions over `grounding.model` data; candidates come back with the reason, and
nothing is ever guessed silently: one candidate is used, several are listed back, none asks.

- `orders_mentioning`: the customer's orders that hold the products the words name ("my kettle").
- `resolve_payment`: "my PayPal", "the Visa ending 1234", "my gift card", "the original card".
- `resolve_item_changes`: "the camera with 5x zoom instead, and the jacket for the exact same
  one" on one order -> (item, new item) pairs, each new item an available variant of the same
  product that keeps every option the customer did not ask to change.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import Any

from csagent.grounding.asking import holding, sentences
from csagent.grounding.comparatives import apply_moves, dimension_named
from csagent.grounding.model import CustomerView, Line, OrderView, PaymentView, Variant
from csagent.grounding.options import OptionHit, find_option_values, other_readings, tokens, yes_no_negated
from csagent.nlp.gloss import gloss
from csagent.nlp.replies import joined, phrase, render_phrase
from csagent.nlp.script import has_ideographs


# ----------------------------------------------------------------------------------- orders
@lru_cache(maxsize=1)
def _synonym_file() -> dict[str, Any]:
    text = resources.files("csagent.grounding").joinpath("data/product_synonyms.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def product_synonyms() -> dict[str, list[str]]:
    """Catalogue product name -> everyday names (`data/product_synonyms.json`)."""
    names: dict[str, list[str]] = _synonym_file()["names"]
    return names


#: Words of category names too common to name the category on their own ("my home address", "send
#: it to my office", "a smart choice", "personal details", "who won the lakers game").
_GENERIC_CATEGORY_WORDS = frozenset({"and", "home", "office", "smart", "personal", "care", "supplies",
                                     "game"})


def category_mentions(text: str, products: Sequence[Mapping[str, Any]]) -> list[str]:
    """The catalogue's categories the words name ("yall got any pet stuff?" is Pet Supplies, "toys
    for a 5 year old" Toys & Games): a distinctive word of the category's name, singular or plural,
    as a whole word. English only; in the order of the catalogue's categories."""
    from csagent.nlp.entities.words import singular

    words = {singular(w) for w in re.findall(r"[a-z]+", text.lower())}
    found: list[str] = []
    for category in dict.fromkeys(str(p.get("category")) for p in products if p.get("category")):
        names = {singular(w) for w in re.findall(r"[a-z]+", category.lower())} - _GENERIC_CATEGORY_WORDS
        if names & words:
            found.append(category)
    return found


def exact_synonyms() -> frozenset[str]:
    """Everyday names that name their product only as written (`data/product_synonyms.json`'s
    `exact`): plurals whose singular is another word ("weights" are the Dumbbell Set, "the weight
    limit" is no dumbbell; "shades", "trainers")."""
    return frozenset(str(w) for w in _synonym_file().get("exact", []))


def _chinese_mentions(text: str, products: Sequence[Mapping[str, Any]]) -> list[Any]:
    """Products named in Chinese ("意式咖啡机那个订单"): the names of `data/product_synonyms.json`'s
    `zh`, as substrings, longest first, each stretch of text naming one product. A longer name of
    a product not among `products` still claims its words: "智能手表" is the Smart Watch, never the
    Wristwatch ("手表") of a customer who owns only a wristwatch. A word of several products
    (`zh_shared`: "耳机") names each of them `products` holds, ambiguous when more than one."""
    from csagent.nlp.entities.products import ProductMention

    data = _synonym_file()
    zh: dict[str, list[str]] = data.get("zh", {})
    named: dict[str, list[str]] = {}
    for name, aliases in zh.items():
        for alias in aliases:
            named.setdefault(alias, []).append(name)
    for alias, names_of in data.get("zh_shared", {}).items():  # "耳机": headphones or earbuds
        named[alias] = list(names_of)
    by_name = {str(p.get("name")): str(p["product_id"]) for p in products}
    taken: list[tuple[int, int]] = []
    found: list[ProductMention] = []
    for alias in sorted(named, key=lambda a: -len(a)):
        at = text.find(alias)
        while at >= 0:
            span = (at, at + len(alias))
            if not any(a < span[1] and span[0] < b for a, b in taken):
                taken.append(span)
                held = [name for name in named[alias] if name in by_name]
                found.extend(ProductMention(by_name[name], name, 1.0, alias, span, ambiguous=len(held) > 1)
                             for name in held)
            at = text.find(alias, at + 1)
    return sorted(found, key=lambda m: m.span[0])


def product_mentions(text: str, products: Sequence[Mapping[str, Any]], *, own: bool = False) -> list[Any]:
    """Catalogue products named in the text (`nlp.entities.products.find_products` over `products` and their
    everyday names: "my bike" is the Bicycle), unambiguous ones first. `own`: `products` are the
    few of one order, among which a weak head word names its product ("the bed": the Pet Bed)."""
    from csagent.nlp.entities.products import find_products

    if has_ideographs(text):
        chinese = _chinese_mentions(text, products)
        if chinese:
            return chinese
    names, exact = product_synonyms(), exact_synonyms()
    extended = list(products) + [
        {**p, "name": alias, "exact": alias in exact}
        for p in products for alias in names.get(str(p.get("name")), [])
    ]
    found = find_products(text, extended, weak_heads=own)
    by_id = {str(p["product_id"]): str(p["name"]) for p in products}
    mentions = [m for m in found if not m.ambiguous] or found
    mentions = _without_modifiers(text, mentions, products)
    # An everyday name reads back as the catalogue's own name.
    return [replace(m, name=by_id.get(m.product_id, m.name)) for m in mentions]


def _without_modifiers(text: str, mentions: list[Any], products: Sequence[Mapping[str, Any]]) -> list[Any]:
    """The mentions without a product word that only describes another product named beside it, as
    one of its option values, that option added to it: "the fleece bed" and "the pet bed in fleece"
    are the Pet Bed in fleece, "my laptop backpack" the Backpack with a laptop compartment, not a
    Fleece Jacket or a Laptop besides."""
    by_id = {str(p["product_id"]): p for p in products}
    options: dict[str, dict[str, tuple[str, str]]] = {}  # (read only for neighbouring mentions)

    def option_named(product_id: str, word: str) -> tuple[str, str] | None:
        if product_id not in options:
            options[product_id] = _options_by_value(by_id[product_id]) if product_id in by_id else {}
        return options[product_id].get(word.lower())

    described: dict[int, dict[str, str]] = {}
    dropped: set[int] = set()
    for i, m in enumerate(mentions):
        for j, n in enumerate(mentions):
            if n.span[0] > m.span[1] and not text[m.span[1]:n.span[0]].strip(" -"):
                described_one = j  # "the fleece bed"
            elif m.span[0] > n.span[1] and _IN_BETWEEN.fullmatch(text[n.span[1]:m.span[0]]):
                described_one = j  # "the pet bed in fleece"
            else:
                continue
            option = option_named(n.product_id, m.surface)
            if option is not None:
                dropped.add(i)
                described.setdefault(described_one, {}).setdefault(*option)
                break
    return [replace(m, options={**described[i], **m.options}) if i in described else m
            for i, m in enumerate(mentions) if i not in dropped]


# The words between a product and an option value of it named after it ("the pet bed in fleece").
_IN_BETWEEN = re.compile(r"\s+(?:in|with|w/?|made of)\s+(?:an?\s+)?", re.IGNORECASE)


def _options_by_value(product: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """{value lower-cased: (option, value as the catalogue spells it)} of a product, in either shape a
    product comes in: the catalogue's (`variants`: item id -> `{options: {key: value}}`) or an order's
    (`options`: key -> [values])."""
    found: dict[str, tuple[str, str]] = {}
    variants = product.get("variants") or {}
    for variant in variants.values() if isinstance(variants, Mapping) else variants:
        for key, value in ((variant or {}).get("options") or {}).items():
            found.setdefault(str(value).lower(), (str(key), str(value)))
    for key, value in (product.get("options") or {}).items():
        for v in value if isinstance(value, list) else [value]:
            found.setdefault(str(v).lower(), (str(key), str(v)))
    return found


def orders_mentioning(
    view: CustomerView, product_ids: Iterable[str], statuses: Sequence[str] | None = None
) -> list[OrderView]:
    """The customer's orders holding any of the products, optionally only in some statuses."""
    wanted = set(product_ids)
    found = [o for o in view.orders if o.product_ids() & wanted]
    if statuses:
        found = [o for o in found if o.in_status(statuses)]
    return found


# ---------------------------------------------------------------------------------- payment
_BRANDS = ("visa", "mastercard", "amex", "american express", "discover")
_BRANDS_ZH = {"万事达": "mastercard", "维萨": "visa", "美国运通": "amex", "运通": "amex"}
_LAST_FOUR = re.compile(r"(?<!\d)(\d{4})(?!\d)")
_ORIGINAL = re.compile(
    r"\b(original(?:ly)?|same (?:card|method|payment)|(?:card|method) i (?:paid|used)|"
    r"paid with|i paid)\b|原来的?(?:那张)?(?:卡|支付方式|付款方式)|原路|原支付",
    re.IGNORECASE,
)
_GIFT = re.compile(r"\bgift\s*-?\s*cards?\b|礼品卡", re.IGNORECASE)
_PAYPAL = re.compile(r"\bpay\s*pal\b", re.IGNORECASE)
# (a "card" of a gift card is none: "can it go on my gift card instead?")
_CREDIT = re.compile(r"\b(credit|debit)\s*card\b|(?<!gift )(?<!gift)(?<!gift-)\bcard\b|信用卡|银行卡",
                     re.IGNORECASE)


@dataclass(frozen=True)
class PaymentChoice:
    """The payment method the words name: `method` when exactly one fits, else `candidates`."""

    method: PaymentView | None = None
    candidates: tuple[PaymentView, ...] = ()
    named: bool = False  # the words name a payment method at all


_NOT_METHOD = re.compile(
    # (with what says it is the one paid with: "rather than the gift card I paid with")
    r"\b(?:not|instead of|rather than|no)\s+"
    r"(?:(?:back|my|the|on|onto|to|into|with|using|from|via|by)\s+){0,3}"
    r"(pay\s*pal|gift\s*cards?|credit\s*cards?|(?:visa|mastercard|amex|discover)(?:\s+card)?"
    r"|(?:card|method|account)(?=\s+(?:i|we)\s+(?:paid|used|bought)))\b"
    r"(?:\s+(?:i|we)\s+(?:paid|used|bought it)(?:\s+(?:with|for it))?\b)?"
    # "I do NOT want the money going back on that Visa": a wish denied a few words before it
    # ("don't put the money back on the card I paid with", "I've stopped using PayPal")
    r"|\b(?:(?:don't|dont|do not|doesn't|does not|never)\s+(?:want|need|like|use|put|send|refund|give|credit)"
    r"|(?:stopped|quit|no longer)\s+using)\b(?:\s+[\w']+){0,6}?\s+"
    r"(?:(?:on|to|onto|into|via|with)\s+)?(?:my\s+|the\s+|that\s+|this\s+)?"
    r"(pay\s*pal|gift\s*cards?|credit\s*cards?|visa|mastercard|amex|discover"
    r"|(?:card|method|account)\s+i\s+(?:paid|used|bought it)(?:\s+with)?"
    r"|original\s+(?:card|method|payment))\b"
    # "不想用礼品卡付了", "别用信用卡": the method the customer no longer wants
    r"|(?:不想用|不想再用|不要用|不用|别用|而不是)(?:我的|那张|原来的)?\s*"
    r"(pay\s*pal|礼品卡|信用卡|银行卡|visa|万事达|mastercard|维萨)",
    re.IGNORECASE,
)


_BRAND_WORDS = re.compile(r"\b(?:" + "|".join(_BRANDS) + r")\b|" + "|".join(_BRANDS_ZH), re.IGNORECASE)


def names_a_gift_card(text: str) -> bool:
    """Do the words name a gift card ("my gift card", "giftcard", "礼品卡")?"""
    return bool(_GIFT.search(text))


def names_a_payment_method(text: str) -> bool:
    """Do the words name a payment method at all ("a new Visa I just got", "my PayPal"), one on the
    account or not (not the one they rule out: "not the card I paid with")?"""
    text = _NOT_METHOD.sub(" ", text)
    return any(p.search(text) for p in (_PAYPAL, _GIFT, _BRAND_WORDS, _CREDIT))


def method_not_held(text: str, view: CustomerView) -> str | None:
    """The kind of payment method the words name that the account holds none of ("with PayPal"
    from an account without PayPal, "my Amex" without one): its name as said to the customer;
    None when every method named is on the account (or none is named). A method ruled out ("not
    with my Visa card") names nothing."""
    text = _NOT_METHOD.sub(" ", text)
    held = {m.source for m in view.payment_methods}
    if _PAYPAL.search(text) and "paypal" not in held:
        return "PayPal"
    if _GIFT.search(text) and "gift_card" not in held:
        return "gift card"
    brands = {_brand_key(m.brand or "") for m in view.payment_methods if m.source == "credit_card"}
    lowered = text.lower()
    for brand in _BRANDS:
        if re.search(rf"\b{brand}\b", lowered) and _brand_key(brand) not in brands:
            return _BRAND_NAMES[_brand_key(brand)]
    return next((zh for zh, brand in _BRANDS_ZH.items() if zh in text and brand not in brands), None)


_BRAND_NAMES = {"visa": "Visa", "mastercard": "Mastercard", "amex": "American Express",
                "discover": "Discover"}


def _brand_key(brand: str) -> str:
    """"American Express", "amex" -> "amex"; "Visa" -> "visa"."""
    key = brand.lower().replace(" ", "")
    return "amex" if key == "americanexpress" else key


def resolve_payment(
    text: str, view: CustomerView, order: OrderView | None = None, exclude: str | None = None
) -> PaymentChoice:
    """The payment method the words name. `exclude` is one the words cannot mean (the method an
    order is paid with, when the customer asks to pay it with another: "move it from my gift card
    to my Visa")."""
    text = _NOT_METHOD.sub(" ", text)  # "my gift card, not PayPal": PayPal is not the one
    methods = [m for m in view.payment_methods if m.payment_method_id != exclude]
    lowered = text.lower()
    cards = [m for m in methods if m.source == "credit_card"]

    def by_card() -> list[PaymentView]:
        # the brands named, in the order said; the first one a card left to choose from has ("I put
        # it on my Visa but I'd rather it went on the Mastercard", the Visa excluded: the Mastercard)
        named = sorted((m.start(), b) for b in _BRANDS if (m := re.search(rf"\b{b}\b", lowered)))
        brands = [b for _, b in named] or [b for zh, b in _BRANDS_ZH.items() if zh in text][:1]
        four = _LAST_FOUR.findall(text)
        exact = [m for m in cards if m.last_four in four] if four else []
        if exact:
            return exact
        for brand in brands:
            held = [m for m in cards if _brand_key(m.brand or "") == _brand_key(brand)]
            if held:
                return held
        return []

    def original() -> list[PaymentView]:
        if not (_ORIGINAL.search(text) and order is not None and order.paid_with):
            return []
        paid = view.payment(order.paid_with)
        return [paid] if paid and paid.payment_method_id != exclude else []

    finders = (
        lambda: [m for m in methods if m.source == "paypal"] if _PAYPAL.search(text) else [],
        lambda: [m for m in methods if m.source == "gift_card"] if _GIFT.search(text) else [],
        by_card,
        original,
        lambda: cards if _CREDIT.search(text) else [],
    )
    candidates: list[PaymentView] = []
    for finder in finders:
        candidates = finder()
        if candidates:
            break
    if not candidates:
        return PaymentChoice(named=False)
    if len(candidates) > 1:
        candidates = _by_amount(text, candidates)
    if len(candidates) == 1:
        return PaymentChoice(method=candidates[0], candidates=tuple(candidates), named=True)
    return PaymentChoice(candidates=tuple(candidates), named=True)


def _by_amount(text: str, candidates: list[PaymentView]) -> list[PaymentView]:
    """Gift cards told apart by the balance the customer mentions ("the one with $52 on it")."""
    amounts = [float(a.replace(",", "")) for a in re.findall(r"\$\s*([\d,]+(?:\.\d+)?)", text)]
    if not amounts:
        return candidates
    close = [
        m
        for m in candidates
        if m.balance is not None and any(abs(m.balance - a) <= max(1.0, 0.05 * a) for a in amounts)
    ]
    return close or candidates


# ------------------------------------------------------------------------------ item changes
_SAME = re.compile(
    r"\b(exact(?:ly)? (?:the )?same|same (?:one|item|exact|model|thing|kind|version)|"
    r"identical|another one|a new one|replacement|brand new one|same again)\b",
    re.IGNORECASE,
)
_PIVOTS = frozenset(
    {
        "to",
        "for",
        "into",
        "but",
        "prefer",
        "want",
        "like",
        "love",
        "get",
        "rather",
        "new",
        "make",
        "become",
        "should",
        "swap",
        "switch",
        "change",
        "exchange",
        "replace",
    }
)
_KEEP_WORDS = frozenset({"same", "keep", "keeping", "still", "unchanged"})
_NEGATED = frozenset({"not", "no", "except"})
_NEGATING_PAIRS = frozenset({("rather", "than"), ("instead", "of")})  # "rather than 9 bar", "instead of red"
_SPLIT = re.compile(
    r"[;\n]|,\s*(?:and\s+)?|\.\s+|\band also\b|\balso\b|\band then\b|\bplus\b|\band\s+(?=the\b|my\b)",
    re.IGNORECASE,
)
# ("whichever colour is cheaper": the cheapest of the versions the other words leave open)
_CHEAPEST = re.compile(r"\b(cheapest|lowest price|least expensive|whichever\b[^.?!,;]{0,30}?\b(?:is |s )?"
                       r"(?:cheaper|less expensive))\b", re.IGNORECASE)
# "the same camera with the 10x zoom", "same again but in gold": everything else stays as it is.
# ("the tshirt thats in the same order as my laptop" says which order, not which options stay; "the
# difference use the same card" how it is paid)
_SAME_BUT = re.compile(r"\b(?:same|exact|exactly|identical)\b(?!\s+(?:order|package|parcel|delivery|box"
                       r"|purchase|shipment|address|day|time|place|card|credit card|payment|method|account"
                       r"|paypal|visa|mastercard|gift card|way)\b)", re.IGNORECASE)
# A wish held only if it can be met ("same red if u have it", "if possible", "preferably").
_IF_THEY_HAVE_IT = re.compile(r"\bif (?:you|u|ya|y'?all) (?:have|got) (?:it|one|them|any)\b|\bif possible\b"
                              r"|\bpreferabl[ey]\b|\bideally\b", re.IGNORECASE)
# A price difference named ("refund the difference", "diff back to my card", "差价").
A_DIFFERENCE = re.compile(r"\b(?:difference|diff)\b|差价", re.IGNORECASE)
_CHEAPER = re.compile(r"\b(cheaper|less expensive|lower[- ]priced|costs? less)\b", re.IGNORECASE)
# Where a fallback begins: "if there's no black one, then white", "size 10, otherwise 11",
# "leather, then suede", "black or navy". A part that names no other option value adds nothing.
# ("or anything", "or whatever", "or so" only trail off: "don't cancel it or anything, just swap ...")
_FALLBACK = re.compile(r"\b(?:if|otherwise|failing that|or else|else|in case)\b|,?\s*\bthen\b"
                       r"|\bor\b(?!\s+(?:anything|something|whatever|so|smth|sth)\b)", re.IGNORECASE)
_CONDITION_FAILS = re.compile(
    r"\b(?:no|not|none|out of stock|unavailable|sold out|can'?t|cannot)\b|n't\b", re.IGNORECASE
)


@dataclass(frozen=True)
class ItemChange:
    line: Line
    new: Variant | None
    # Why no single variant fits (the customer is asked), as a phrase (`nlp.replies.phrase`): said
    # in the customer's language in the item change's question.
    problem_phrase: Mapping[str, Any] | None = None
    options: tuple[Variant, ...] = ()  # the variants that fit equally, when several do
    unstated: bool = False  # the item is named but no change for it is
    undecided: bool = False  # the order holds several of the product and the words tell none apart
    # the words name the option to change, not its value ("another colour"): which value is asked
    asks_value: bool = False

    @property
    def problem(self) -> str | None:
        """The problem in English (what is read and tested of it; its words are the phrase's)."""
        return render_phrase(self.problem_phrase, "en") if self.problem_phrase else None


@dataclass(frozen=True)
class ItemChanges:
    changes: tuple[ItemChange, ...] = ()
    unmatched: tuple[str, ...] = ()  # product words naming nothing in the order

    @property
    def complete(self) -> bool:
        return bool(self.changes) and all(c.new is not None for c in self.changes) and not self.unmatched

    def problems(self) -> list[str]:
        return [c.problem for c in self.changes if c.problem]

    def problem_phrases(self) -> list[Mapping[str, Any]]:
        return [c.problem_phrase for c in self.changes if c.problem_phrase]


_CONNECTOR = re.compile(r"\b(?:but|and|or|except|while|whereas|though|then)\b", re.IGNORECASE)


def _last_connector(text: str, lo: int, hi: int) -> int | None:
    """Where the last connector in text[lo:hi] starts, None when there is none."""
    found = list(_CONNECTOR.finditer(text, lo, hi))
    return found[-1].start() if found else None


def _cut_before(text: str, after: int, start: int) -> int:
    """Where the words of a mention starting at `start` begin, after one ending at `after`: at the
    last connector between them ("but keep the", "and not the"), else at the mention."""
    cut = _last_connector(text, after, start)
    return start if cut is None else cut


def _segments(text: str, mentions: Sequence[Any]) -> list[tuple[Any, str]]:
    """The text that belongs to each product mention: its own clause piece, plus the following
    pieces that name no product ("the camera, I want 5x zoom instead")."""
    bounds = [0] + [m.end() for m in _SPLIT.finditer(text)] + [len(text)]
    pieces = [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1) if bounds[i] < bounds[i + 1]]
    owned: dict[int, list[str]] = {i: [] for i in range(len(mentions))}
    last: int | None = None
    pending: list[str] = []
    for lo, hi in pieces:
        inside = [i for i, m in enumerate(mentions) if lo <= m.span[0] < hi]
        piece = text[lo:hi]
        if not inside:
            if last is None:
                pending.append(piece)
            else:
                owned[last].append(piece)
            continue
        if len(inside) == 1:
            owned[inside[0]].extend(pending + [piece])
        else:  # several products in one piece: cut it before each mention, at the connector
            # that opens the mention's words ("return the clock but keep the bottle": "but keep"
            # is the bottle's)
            cuts = [lo] + [_cut_before(text, mentions[inside[j]].span[1], mentions[i].span[0])
                           for j, i in enumerate(inside[1:])] + [hi]
            for j, i in enumerate(inside):
                owned[i].append(text[cuts[j]:cuts[j + 1]])
            owned[inside[0]][0:0] = pending
        pending = []
        last = inside[-1]
    return [(mentions[i], " ".join(owned[i])) for i in range(len(mentions))]


def option_dimensions(variants: Sequence[Variant], line: Line) -> dict[str, list[str]]:
    """{option: the values the product's variants have, in their order}, the line's options first
    (each listed, even one no variant has)."""
    dims: dict[str, list[str]] = {k: [] for k in line.options}
    for v in variants:
        for k, value in v.options.items():
            if value not in dims.setdefault(k, []):
                dims[k].append(value)
    return dims


def _pivot(toks: Sequence[str], hits: Sequence[OptionHit]) -> int | None:
    """Where the description of the item ends and the wish begins: the first pivot word ("to",
    "for", "instead", "want" ...) after the first option named, or a "to" / "for" / "into" just
    before it when nothing is described first ("changed to the 2 liter one, same ceramic for gas")."""
    if not hits:
        return None
    first, last = hits[0].position, hits[-1].position
    leading = [i for i in range(max(0, first - 3), first) if toks[i] in _TARGET_PIVOTS
               and not _CHANGE_VERBS & set(toks[i + 1:i + 3]) and toks[i - 1:i] != ["want"]]
    if leading:
        # "changed to the 2 liter one, same ceramic for gas": the wish begins before anything is
        # described, and a "for" inside it is no pivot
        return leading[-1]
    # A pivot with nothing named after it ("..., PayPal for the difference") ends no description;
    # nor does one that leads to the change verb ("I'd like to exchange ..."), nor the verb itself
    # when its object is described before "for" ("exchange the medium one with the laptop sleeve
    # for the large navy one"); nor a wish to keep ("... to a medium frame? still want a mountain
    # bike": what stays, not what the item is now).
    # "19 bar rather than 9 bar" names the wish first: "rather than" is a negation, no pivot.
    pivots = [i for i, t in enumerate(toks) if t in _PIVOTS and first < i < last
              and not _CHANGE_VERBS & set(toks[i + 1:i + 3]) and not (i > 0 and toks[i - 1] in _KEEP_WORDS)
              and not {"keep", "keeping"} & set(toks[i + 1:i + 3])  # ("I'd like to keep the leather band")
              and toks[i + 1:i + 2] != ["than"]]
    if len(pivots) > 1 and toks[pivots[0]] in _CHANGE_VERBS and toks[pivots[1]] in _TARGET_PIVOTS \
            and any(pivots[0] < h.position < pivots[1] for h in hits):
        return pivots[1]
    return pivots[0] if pivots else None


_CHANGE_VERBS = frozenset({"exchange", "swap", "switch", "change", "replace", "trade", "modify", "upgrade"})
_TARGET_PIVOTS = frozenset({"for", "to", "into"})


def negated_option(toks: Sequence[str], hit: OptionHit, others: Sequence[OptionHit] = ()) -> bool:
    """Is the option value named after a negation ("not the glass one", "no black", "rather than
    9 bar", "instead of red"; not "the 1.5 litre one instead? silver if you have it")? A yes-or-no
    value read with its own "not" ("the one that's NOT waterproof": no) is not negated again. The
    negation reaches the value after it, and those joined to it ("not black or blue"), not one
    after it that describes the item ("black instead of silver, the 8 inch one": `others` are the
    other values named)."""
    if hit.value in ("yes", "no") and yes_no_negated(toks, hit.position):
        return False
    start = max(0, hit.position - 4)
    at = max([i + 1 for i in range(max(0, hit.position - 3), hit.position) if toks[i] in _NEGATED]
             + [i + 2 for i in range(start, hit.position - 1) if (toks[i], toks[i + 1]) in _NEGATING_PAIRS],
             default=None)
    if at is None:
        return False
    return not any(at <= o.position < hit.position and not _joined(toks[o.position + o.length:hit.position])
                   for o in others)


# Words saying an option does not matter ("don't care if", "doesn't matter", "no matter which").
_LEFT_OPEN = frozenset({("dont", "care"), ("not", "care"), ("dont", "mind"), ("doesnt", "matter"),
                        ("dont", "matter"), ("not", "matter"), ("no", "matter"), ("wouldnt", "matter")})


def _left_open(toks: Sequence[str], position: int) -> bool:
    """Is the value at `position` one the words just before leave open ("dont care if its vneck or
    not", "doesn't matter if it's bagged")?"""
    return any((toks[i], toks[i + 1]) in _LEFT_OPEN for i in range(max(0, position - 5), position - 1))


def _joined(between: Sequence[str]) -> bool:
    """Do the words between two values join them ("black or the blue", "black, blue")?"""
    return not between or (set(between) <= _JOINING_WORDS and bool(set(between) & {"or", "and", "nor"}))


# Words between values a negation reaches together ("not the black or the blue one").
_JOINING_WORDS = frozenset({"or", "and", "nor", "the", "a"})


def _resolve_keys(toks: Sequence[str], hits: Sequence[OptionHit]) -> list[OptionHit]:
    """A word that is a value of several dimensions ("black" frame and lens colour) belongs to the
    dimension whose own word is next to it ("black frame", "brown lenses"), else to the first such
    dimension no other word of the text has taken ("the black ones w brown lenses": the frame), else
    to the first."""
    by_place: dict[int, list[OptionHit]] = {}
    for hit in hits:
        by_place.setdefault(hit.position, []).append(hit)
    chosen: dict[int, OptionHit] = {}
    for place, group in by_place.items():
        if len(group) == 1:
            chosen[place] = group[0]
            continue
        around = toks[max(0, place - 2) : place + group[0].length + 2]
        near = set(around) | {_singular(t) for t in around}
        shared = set.intersection(*(set(tokens(h.key)) for h in group))
        named = [h for h in group if set(tokens(h.key)) - shared & near]
        if named:
            chosen[place] = named[0]
    for place, group in by_place.items():
        if place not in chosen:
            taken = {h.key for h in chosen.values()}
            chosen[place] = next((h for h in group if h.key not in taken), group[0])
    return sorted(chosen.values(), key=lambda h: h.position)


def _singular(word: str) -> str:
    """ "lenses" -> "lens", "frames" -> "frame": enough to meet a dimension's own word beside a value
    (`nlp.entities.words.singular`, which the tokens use, reads "lenses" as "lense": it keeps the
    "e" of "cases" and "houses"; here a wrong form only adds a word that meets no dimension)."""
    if len(word) > 4 and word.endswith(("ses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _targets(segment: str, line: Line, hits: Sequence[OptionHit]) -> dict[str, str]:
    """The options the customer asks to change: values that differ from the item's own, the last one
    named per dimension after the pivot ("from black to white") winning; dimensions the customer
    keeps ("same battery", "still glass") are not changed."""
    toks = tokens(segment)
    pivot = _pivot(toks, hits)
    kept = {h.key for h in hits if h.position > 0 and toks[h.position - 1] in _KEEP_WORDS}
    wanted: dict[str, str] = {}
    for hit in hits:
        # (yes/no carry their "not")
        negated = hit.value not in ("yes", "no") and negated_option(toks, hit, hits)
        if hit.value == line.options.get(hit.key) or hit.key in kept or negated:
            continue
        after_pivot = pivot is not None and hit.position > pivot
        if pivot is not None and not after_pivot:
            continue  # describes the item as it is (or mis-describes it): not a wish
        if hit.key not in wanted or after_pivot:
            wanted[hit.key] = hit.value
    return wanted


def _named_as_it_is(segment: str, line: Line, hits: Sequence[OptionHit]) -> dict[str, str]:
    """The values the wish names that the item already has ("the black 5.8-inch one with 128GB" for
    a gold 5.8-inch 128GB phone: 5.8-inch, 128GB): not changes, but what the new one should have."""
    toks = tokens(segment)
    pivot = _pivot(toks, hits)
    return {h.key: h.value for h in hits
            if (pivot is None or h.position > pivot) and h.value == line.options.get(h.key)
            and not (h.value not in ("yes", "no") and negated_option(toks, h, hits))}


def _line_fit(line: Line, segment: str, hits: Sequence[OptionHit]) -> int:
    """How well the words before the wish describe this line (negated words do not count)."""
    toks = tokens(segment)
    pivot = _pivot(toks, hits)
    described = [h for h in hits
                 if (pivot is None or h.position < pivot) and not negated_option(toks, h, hits)]
    return sum(1 for h in described if line.options.get(h.key) == h.value)


def choose_variant(
    line: Line, variants: Sequence[Variant], wanted: Mapping[str, str], cheapest: bool = False,
    cheaper: bool = False, *, ask_when_far: bool = False,
) -> ItemChange:
    """The variant of the line's product with the `wanted` options that keeps most of the others;
    with `cheaper`, only one priced below the item ("if it's cheaper, switch me"). With
    `ask_when_far` (a wish as said, no preference of what to keep), when the closest keeps no more
    than half of the options the wish leaves alone and others are there, which one is asked (none is
    picked that changes much of what nobody asked to change)."""
    fitting = [v for v in variants if all(v.options.get(k) == val for k, val in wanted.items())]
    shown = [f"{k}: {val}" if val in ("yes", "no") else val for k, val in wanted.items()]
    if not fitting:
        return ItemChange(line, None, phrase("change_not_offered", product=line.name, options=shown))
    available = [v for v in fitting if v.available]
    if not available:
        return ItemChange(line, None, phrase("change_unavailable", product=line.name, options=shown))
    if cheaper:
        below = [v for v in available if v.price < line.price]
        yours = f"${line.price:.2f}"
        if not below and len(available) == 1:
            only = available[0]
            return ItemChange(line, None, phrase("change_not_cheaper", product=line.name, own_price=yours,
                                                 options=list(only.options.values()),
                                                 price=f"${only.price:.2f}"))
        if not below:
            return ItemChange(line, None, phrase("change_none_cheaper_in", product=line.name, options=shown,
                                                 own_price=yours) if shown
                              else phrase("change_none_cheaper", product=line.name, own_price=yours))
        available = below
    if cheapest:
        low = min(v.price for v in available)
        available = [v for v in available if v.price == low]
    kept = {
        v.item_id: sum(1 for k, val in line.options.items() if v.options.get(k) == val) for v in available
    }
    best = max(kept.values())
    # (listed cheapest first, whatever order the catalogue read returned them in)
    top = sorted((v for v in available if kept[v.item_id] == best), key=lambda v: (v.price, v.item_id))
    unasked = sum(1 for k in line.options if k not in wanted)  # the options the wish leaves as they are
    # "can i exchange it for a L?" of a navy XL full-zip jacket no L comes in navy: the closest L keeps
    # no more than half of what nobody asked to change (black and full-zip, or red and half-zip), so
    # which is asked, every one listed, the closest first, rather than one picked for them. (A red L
    # cotton v-neck tee wished in XXL becomes the red XXL cotton crew neck: most is kept.)
    far = ask_when_far and unasked > 0 and 2 * best <= unasked and len(available) > 1
    if len(top) == 1 and not far:
        return ItemChange(line, top[0])
    listed = sorted(available, key=lambda v: (-kept[v.item_id], v.price, v.item_id)) if far else top
    return ItemChange(line, None, phrase("change_several_fit", product=line.name), options=tuple(listed))


_ARROW = re.compile(r"\s*(?:->|→|=>|-->)\s*")


_OPENS_FALLBACK = re.compile(r"^\W*(?:(?:and|but|or)\s+)?(if|otherwise|failing that|or else|else|in case)\b",
                             re.IGNORECASE)


def is_fallback(clause: str) -> bool:
    """ "if blue isn't in stock, white is fine", "otherwise size 11", "Same size would be ideal but if
    you don't have that, a slightly bigger one is fine": a clause that only says what to take when
    the wish before it cannot be had (opening with the fallback, or after a preference and "but")."""
    clause = gloss(clause)  # "如果9码没货就换12码": "if 9 size not available ..."
    m = _OPENS_FALLBACK.search(clause) or _FALLBACK_AFTER_BUT.search(clause)
    if m is None:
        return False
    return m.group(1).lower() not in ("if", "in case") \
        or bool(_CONDITION_FAILS.search(clause[m.start(1):][:60]))


# "..., but if you don't have that", "... ideal, but otherwise": a fallback after the preference it qualifies
_FALLBACK_AFTER_BUT = re.compile(r",?\s*\bbut\s+(if|otherwise|failing that|in case)\b", re.IGNORECASE)


def _split_fallbacks(segment: str) -> tuple[str, list[str]]:
    """The wish and the fallbacks after it ("..., if there's no black one then white"). An "if"
    without a failing condition ("if possible") stays part of the wish; so does a "then" whose
    sentence names no condition before it ("Okay then. Can I exchange it for black?")."""
    cuts = [m for m in _FALLBACK.finditer(segment) if m.start() > 0]
    parts: list[str] = []
    start = 0
    for m in cuts:
        word = m.group(0).strip(" ,").lower()
        rest = segment[m.start() :]
        if word in ("if", "in case") and not _CONDITION_FAILS.search(rest[:60]):
            continue
        if word == "then":
            before = re.split(r"[.!?]", segment[:m.start()])[-1]
            if not (_CONDITION_FAILS.search(before) or re.search(r"\bif\b", before, re.IGNORECASE)):
                continue
        parts.append(segment[start : m.start()])
        start = m.start()
    parts.append(segment[start:])
    return parts[0], parts[1:]


def _alternatives(
    fallbacks: Sequence[str], dims: Mapping[str, Sequence[str]], line: Line, wanted: Mapping[str, str]
) -> list[dict[str, str]]:
    """The option sets to try, in order, when the wish is not available: each fallback changes the
    wish by the values it names that the wish did not ("no blue M, then red": red), and by the
    steps it asks of the item as it is ("otherwise a bigger one": the next size up)."""
    alternatives: list[dict[str, str]] = []
    for part in fallbacks:
        toks = tokens(part)
        hits = _resolve_keys(toks, find_option_values(part, dims))
        alternative = dict(wanted)
        for hit in hits:
            # "if there's no blue M, then red": blue and M are the condition; "black if you have it,
            # if not silver": "if not" is "otherwise", and silver the choice.
            conditioned = any(toks[j] in _NEGATED and not (toks[j] == "not" and j > 0 and toks[j - 1] == "if")
                              for j in range(max(0, hit.position - 2), hit.position))
            if conditioned or hit.value == wanted.get(hit.key):
                continue
            alternative[hit.key] = hit.value
        # ("if you don't have that, a slightly bigger one is fine": one step from the item as it is)
        # (after the condition: "if there isn't one, a bigger one": the "isn't" rules out no step)
        consequent = part.split(",", 1)[1] if "," in part and re.match(r"\W*(?:if|in case)\b", part, re.I) \
            else part
        for key, value in apply_moves(consequent, line.options, dims).items():
            if key not in {h.key for h in hits}:
                alternative[key] = value
        if alternative != wanted and alternative not in alternatives:
            alternatives.append(alternative)
    return alternatives


_LIKE_THE_ONE = re.compile(r"\b(?:just |exactly )?(?:like|as) (?:the|my) (?:[\w-]+ ){1,3}?one\b",
                           re.IGNORECASE)


def resolve_item_changes(
    text: str, order: OrderView, variants: Mapping[str, Sequence[Variant]]
) -> ItemChanges:
    """The order's items the text names, each with the variant it should become."""
    text = _ARROW.sub(" to ", text)
    # "... for the same helmet in white. The blue one is fine.": a sentence that keeps something as
    # it is names no wish
    text = _FINE_AS_IS.sub(lambda m: " " * len(m.group(0)) if _names_an_item(m.group(0), order)
                           else m.group(0), text)
    # "black instead? Same size XXL, cotton crew neck like the red one": what "like the red one"
    # names is the item as it is, the options kept, not one wished for.
    text = _LIKE_THE_ONE.sub(lambda m: " " * len(m.group(0)), text)
    mentions = sorted(product_mentions(text, order.products(), own=True), key=lambda m: m.span[0])
    describing = identifying_order(text, mentions)
    # "the grey backpack that's coming with my grill - I want the green one": the backpack changes;
    # the grill only says which order (and the words after it are the backpack's)
    mentions = [m for m in mentions if m not in describing] or mentions \
        or _item_the_options_name(text, order, variants)
    mentions = _without_targets(text, mentions)
    changes: list[ItemChange] = []
    used: list[Line] = []
    for mention, segment in _merge_repeats(_segments(text, mentions), order):
        lines = [x for x in order.lines if x.product_id == mention.product_id and x not in used]
        if not lines:
            continue
        product_variants = variants.get(mention.product_id) or ()
        dims = option_dimensions(product_variants, lines[0])
        wish, fallbacks = _split_fallbacks(gloss(segment))
        wish_toks = tokens(wish)
        # (a value the customer says they do not mind either way is no wish: "blue still pls, dont
        # care if its vneck or not")
        hits = [h for h in _resolve_keys(wish_toks, find_option_values(wish, dims))
                if not _left_open(wish_toks, h.position)]
        # Two of the same product ("the black chair, not the blue one"): the one the words describe,
        # or the only one the wish would change ("make the helmet an L": not the L one); else asked.
        line, undecided = _line_meant(lines, wish, hits, dims)
        degree = _by_degree(text, mention, mentions, undecided) if undecided else None
        if degree is not None:
            # "exchange the shorter of my two plastic skateboards for a bamboo one"
            line, undecided = degree, []
        used.append(line)
        if undecided:
            changes.append(ItemChange(line, None, sentences(holding(undecided), phrase("ask_which_one")),
                                      undecided=True))
            continue
        wanted = {**apply_moves(wish, line.options, dims), **_targets(wish, line, hits)}
        if not wanted:
            # "Is there a bagless robot version I could swap it for? Keep it cordless" (of a bagged
            # one): the dimension named has one other value available with what is kept; that one.
            asked, values = _values_offered(wish_toks, segment, line, dims, product_variants)
            if asked is not None and len(values) == 1 and set(tokens(values[0])) <= set(wish_toks):
                # (only when the wish names that value itself, beside the one the item has)
                wanted = {asked: values[0]}
        # ("If it works out cheaper, please refund the difference to my gift card": where the money
        # goes if it is, no condition on the change)
        priced = " ".join(s for s in re.split(r"(?<=[.!?])\s+", segment)
                          if not A_DIFFERENCE.search(s))
        cheaper = bool(_CHEAPER.search(priced)) and not _CHEAPEST.search(segment)
        if cheaper and wanted:
            # "is the 1 litre version cheaper? If it is, switch me": that version, as it is
            # otherwise, is compared; a search among cheaper ones is for "a cheaper one" alone.
            wanted = {**line.options, **wanted}
        if not wanted and not cheaper:
            if _SAME.search(segment):
                current = next((v for v in product_variants if v.item_id == line.item_id), None)
                changes.append(
                    ItemChange(line, current or Variant(line.item_id, dict(line.options), line.price, True))
                )
            else:
                question = _which_value(wish_toks, segment, line, dims, product_variants)
                which = question["template"] == "change_to_which"
                changes.append(ItemChange(line, None, question, unstated=not which, asks_value=which))
            continue
        cheapest = bool(_CHEAPEST.search(segment))
        alternatives = _alternatives(fallbacks, dims, line, wanted)
        # "same colour", "still want white"; "green or black, with the same battery life" (said after
        # the fallback, of every choice)
        by_name = _kept_by_name(wish_toks, hits, dims, tokens(gloss(segment))) - set(wanted)
        if _SAME_BUT.search(wish) and not alternatives:
            # (what the wish names as the item has it, as which one it is, is kept too: "black
            # instead of silver, the 8 inch one, same 128gb" keeps the 8-inch screen; "the stainless
            # steel one, same size, in black" only wishes black)
            keeps = by_name | {h.key for h in hits if line.options.get(h.key) == h.value
                               and wish_toks[h.position + h.length:][:1] in (["one"], ["ones"])}
            as_kept = _same_but(line, product_variants, wanted, cheapest, cheaper, keeps,
                                preferred=bool(_IF_THEY_HAVE_IT.search(segment)))
            if as_kept.new is None and not as_kept.options:
                others = (_same_but(line, product_variants, other, cheapest, cheaper, keeps)
                          for other in _other_wishes(wish, line, dims))
                as_kept = next((c for c in others if c.new is not None), as_kept)
            changes.append(as_kept)
            continue
        # "The same bottle in green; if there's no green, red": a fallback that keeps every other
        # option comes before the wish with other options changed.
        kept = (choose_variant(line, product_variants, {**line.options, **option_set}, cheapest, cheaper)
                for option_set in ((wanted, *alternatives) if alternatives else ()))
        # What they keep by name ("... size M? still want white") holds in what is chosen, and so
        # does what the wish names as the item has it ("换成M码的红色", M in red, of a red XXL tee).
        held = {**{k: line.options[k] for k in by_name if k in line.options},
                **_named_as_it_is(wish, line, hits)}
        choice = next((c for c in kept if c.new is not None), None) or choose_variant(
            line, product_variants, {**held, **wanted}, cheapest, cheaper, ask_when_far=True)
        if choice.new is None and len(choice.options) > 1:
            # Several versions fit what changes; the one with what the wish also named as it is.
            same = _named_as_it_is(wish, line, hits)
            named = [v for v in choice.options
                     if same and all(v.options.get(k) == x for k, x in same.items())]
            if len(named) == 1:
                choice = ItemChange(line, named[0])
        if choice.new is None and len(choice.options) > 1:
            # (or what the message calls their item by, when one version keeps it: "change the
            # fantasy puzzle to the 1000 piece one" is the 1000-piece fantasy puzzle, whatever its
            # difficulty; "the red tee ... XXL" the red one)
            said = set(tokens(text))
            described = {k: x for k, x in line.options.items()
                         if k not in wanted and tokens(x) and set(tokens(x)) <= said}
            named = [v for v in choice.options
                     if described and all(v.options.get(k) == x for k, x in described.items())]
            if len(named) == 1:
                choice = ItemChange(line, named[0])
        unavailable = choice.new is None and not choice.options
        for other in _other_wishes(wish, line, dims) if unavailable and not alternatives else ():
            fits = choose_variant(line, product_variants, {**held, **other}, cheapest, cheaper)
            if fits.new is not None:
                choice, unavailable = fits, False
                break
        for alternative in alternatives if unavailable else []:
            fallback = choose_variant(line, product_variants, {**held, **alternative}, cheapest, cheaper)
            if fallback.new is not None or fallback.options:
                choice = fallback  # "if there's no black one, then white": the first that is there
                break
        changes.append(choice)
    # An item named without any change ("only the espresso machine, not the tablets", "the mouse
    # stays") is context, not a request, once another item has one.
    # (so is one whose words only named an option: "... the E-Reader should be the 7-inch one; the
    # makeup kit" asks no kit size)
    if any(c.new is not None or c.options for c in changes):
        changes = [c for c in changes if not (c.unstated or c.asks_value)]
    return ItemChanges(changes=tuple(changes))


def _which_value(wish: Sequence[str], segment: str, line: Line, dims: Mapping[str, Sequence[str]],
                 variants: Sequence[Variant]) -> Any:
    """What to ask of an item whose wish names no value: "What would you like the Running Shoes
    changed to?", or, when it names the dimension to change ("other color, same size"), which of
    the values available with what it keeps: "Which color would you like the Running Shoes in:
    black or yellow?"."""
    asked, values = _values_offered(wish, segment, line, dims, variants)
    if asked is not None and values:
        return phrase("change_to_which", product=line.name, dimension=asked, values=joined(values, "or"))
    return phrase("change_to_what", product=line.name)


def _values_offered(wish: Sequence[str], segment: str, line: Line, dims: Mapping[str, Sequence[str]],
                    variants: Sequence[Variant]) -> tuple[str | None, list[str]]:
    """The dimension a wish that names no value names ("other color, same size"), and the values
    available for it with what the words keep."""
    kept = _dimensions_kept(tokens(gloss(segment)), dims)
    # (a yes-or-no dimension's name is its value: "a waterproof version" wishes for "yes")
    asked_of = [k for k, values in dims.items() if not set(values) <= {"yes", "no"}]
    named = (dimension_named([tok], asked_of) for tok in wish)
    asked = next((key for key in named if key is not None and key not in kept), None)
    if asked is None:
        return None, []
    return asked, sorted({str(v.options[asked]) for v in variants
                          if v.available and v.options.get(asked) not in (None, line.options.get(asked))
                          and all(v.options.get(k) == line.options.get(k) for k in kept)})


def _item_the_options_name(text: str, order: OrderView,
                           variants: Mapping[str, Sequence[Variant]]) -> list[Any]:
    """The item a change that names no product of the order is about ("could you change it to a
    medium in blue?", "my wristwatch from silicone to leather", "my coffee maker with 19 bar rather
    than 9"): the order's only product, else the one whose options the words name most (none when
    two name as many). A mention of it covering no words, so the whole text is its segment."""
    from csagent.nlp.entities.products import ProductMention

    lines = {x.product_id: x for x in order.lines}
    wish = gloss(text)
    named = {pid: len({(h.key, h.value)
                       for h in find_option_values(wish, option_dimensions(variants.get(pid) or (), line))})
             for pid, line in lines.items()}
    ranked = sorted(named.values(), reverse=True)
    if len(lines) > 1 and (ranked[0] == 0 or ranked[1] == ranked[0]):
        return []
    best = max(named, key=lambda pid: named[pid])
    line = lines[best]
    return [ProductMention(product_id=line.product_id, name=line.name, score=0.0, surface="", span=(0, 0))]


def _line_meant(lines: Sequence[Line], wish: str, hits: Sequence[OptionHit],
               dims: Mapping[str, Sequence[str]]) -> tuple[Line, list[Line]]:
    """(the line of one product the wish is about, the lines it could not tell apart)."""
    if len(lines) == 1:
        return lines[0], []
    fits = [_line_fit(x, wish, hits) for x in lines]
    tied = [x for x, fit in zip(lines, fits, strict=True) if fit == max(fits)]
    if len({x.item_id for x in tied}) == 1:
        return tied[0], []
    changed = [x for x in tied
               if any(x.options.get(k) != v
                      for k, v in {**apply_moves(wish, x.options, dims), **_targets(wish, x, hits)}.items())]
    if len(changed) == 1:
        return changed[0], []
    return tied[0], tied


def _other_wishes(wish: str, line: Line, dims: Mapping[str, Sequence[str]]) -> Iterator[dict[str, str]]:
    """What the wish asks for with a word read the other way (`options.other_readings`): "same
    colour just medium please", of a blue helmet the store has in size M but not with medium
    ventilation, asks for size M. Tried only when the first reading names no version there is."""
    toks = tokens(wish)
    for reading in other_readings(wish, dims):
        read = _resolve_keys(toks, reading)
        other = {**apply_moves(wish, line.options, dims), **_targets(wish, line, read)}
        if other:
            yield other


def _same_but(line: Line, variants: Sequence[Variant], wanted: Mapping[str, str], cheapest: bool,
              cheaper: bool, kept: Iterable[str] = (), preferred: bool = False) -> ItemChange:
    """ "The same camera with the 10x zoom": every option not named stays. When that variant is not
    there, the customer is told so, with the variants that have what they named, never given one
    that changes what they asked to keep. Options kept by name (`kept`: "same colour", "the same
    white one") are what they asked to keep: the one variant with what they named and those is
    the change ("the same white helmet but size M", the white M having another ventilation), and
    when there is none, that is the answer ("the purple tee in L, same colour": no purple L), with
    the versions that have what they named when they keep it only if it can be kept (`preferred`:
    "same red if u have it")."""
    exact = choose_variant(line, variants, {**line.options, **wanted}, cheapest, cheaper)
    if exact.new is not None or exact.options:
        return exact
    keep = {k: v for k, v in line.options.items() if k in set(kept)}  # (in the item's own order)
    loose = choose_variant(line, variants, {**keep, **wanted}, cheapest, cheaper)
    if keep and loose.new is not None:
        return loose
    offered = (loose.new,) if loose.new is not None else loose.options
    if keep and not offered:
        # (what they keep only if it can be kept, "for a 7ft one. same red if u have it": the 7 ft
        # ones there are, offered)
        others = choose_variant(line, variants, wanted, cheapest, cheaper) if preferred else None
        return ItemChange(line, None, phrase("change_not_available_in", product=line.name,
                                             options=list({**keep, **wanted}.values())),
                          options=() if others is None else (others.new,) if others.new is not None
                          else others.options)
    return replace(exact, options=offered) if offered else exact


def _after_a_keep_word(toks: Sequence[str], position: int) -> bool:
    """Is the word at `position` kept: after "same", "still", "keep" with only a few filler words
    between ("same white", "still want white", "keep it white")?"""
    j = position - 1
    while j >= 0 and position - j <= _KEEP_REACH and toks[j] in _KEEP_FILLER:
        j -= 1
    return j >= 0 and toks[j] in _KEEP_WORDS


# (Not "one" nor "in": "the same one in blue" asks for blue; "keep the leather band" keeps it.)
_KEEP_FILLER = frozenset({"want", "wanted", "need", "like", "it", "them", "to", "be", "as", "the", "my",
                          "its"})
_KEEP_REACH = 3
# "same battery life and water resistance": how far a list of dimensions after a keep word reaches.
_KEEP_LIST_REACH = 6
_KEEP_LIST_JOINS = frozenset({"and", "&", "or", "the", "its", "their"})


def _kept_by_name(toks: Sequence[str], hits: Sequence[OptionHit],
                  dims: Mapping[str, Sequence[str]], whole: Sequence[str]) -> set[str]:
    """The dimensions the words keep by name: a value of the wish (`toks`, where `hits` are) after a
    keep word ("same white", "still blue"), or the dimension itself anywhere in the `whole` segment
    the wish begins ("same size", "green or black, with the same battery life": said of every
    choice)."""
    return {h.key for h in hits if _after_a_keep_word(toks, h.position)} | _dimensions_kept(whole, dims)


def _dimensions_kept(toks: Sequence[str], dims: Mapping[str, Sequence[str]]) -> set[str]:
    """The dimensions kept by name: "same size", "the same battery life and water resistance", and
    named before a verb of staying ("The colour and style can stay exactly the same")."""
    kept: set[str] = set()

    def keys_of(word: str) -> set[str]:
        named = "color" if word == "colour" else word
        return {key for key in dims if named in tokens(key)}

    for i, word in enumerate(toks):
        if word in _STAY_VERBS:
            for before in reversed(toks[max(0, i - _KEEP_LIST_REACH):i]):
                keys = keys_of(before)
                if not keys and before not in _KEEP_LIST_JOINS | _STAY_GAP:
                    break
                kept |= keys
        if word not in _KEEP_WORDS:
            continue
        for after in toks[i + 1 : i + 1 + _KEEP_LIST_REACH]:
            keys = keys_of(after)
            if not keys and after not in _KEEP_LIST_JOINS:
                break
            kept |= keys
    return kept


# Verbs saying a dimension stays as it is, and the words between it and them ("the colour can stay",
# "颜色和材质都不变": "color and material both unchanged").
_STAY_VERBS = frozenset({"stay", "stays", "remain", "remains", "unchanged"})
_STAY_GAP = frozenset({"can", "should", "must", "will", "to", "may", "please", "both", "all", "be"})


# A short sentence saying something is fine as it is ("The blue one is fine.", "the other bed and the
# headphones are ok").
_FINE_AS_IS = re.compile(r"(?:^|(?<=[.!?;]))\s*(?:[\w'-]+\s+){0,6}?(?:is|are|'s)\s+"
                         r"(?:fine|ok|okay|good|perfect)"
                         r"(?:\s+(?:though|thanks|thank you|as is|as it is|as they are|too|as well))*"
                         r"\s*(?:[.!?;]|$)", re.IGNORECASE)
# What a sentence saying something is fine must be about to keep it as it is: an item ("the blue one",
# "the rest"), not an option ("Polyester is fine." accepts polyester).
_AN_ITEM = re.compile(r"\b(?:one|ones|other|others|rest|everything|it|they)\b", re.IGNORECASE)


def _names_an_item(sentence: str, order: OrderView) -> bool:
    return bool(_AN_ITEM.search(sentence)) or bool(product_mentions(sentence, order.products(), own=True))


# What comes between an item and the product named again as what it should become ("exchange the
# beige pet bed for the same bed in grey", "swap my kettle to a glass kettle").
_FOR_THE_SAME = re.compile(r"^\W*(?:[\w-]+\W+){0,3}?(?:for|to|into)\s+(?:the\s+|a\s+|an\s+)?(?:same\s+)?"
                           r"(?:[\w-]+\s+){0,2}$", re.IGNORECASE)


def _without_targets(text: str, mentions: Sequence[Any]) -> list[Any]:
    """The mentions of the order's items, without a product named again only as what the item
    before it should become: its words are that item's wish, whatever else of it the order holds."""
    kept: list[Any] = []
    for m in mentions:
        before = next((p for p in reversed(kept) if p.product_id == m.product_id), None)
        if before is not None and before.span[1] <= m.span[0] \
                and _FOR_THE_SAME.match(text[before.span[1]:m.span[0]]):
            continue
        kept.append(m)
    return kept


def _merge_repeats(segments: list[tuple[Any, str]], order: OrderView) -> list[tuple[Any, str]]:
    """A product named twice in a row ("the earbuds ... for the same earbuds") is one item when the
    order holds one of it: the segments join."""
    merged: list[tuple[Any, str]] = []
    for mention, segment in segments:
        single = sum(1 for x in order.lines if x.product_id == mention.product_id) == 1
        if merged and merged[-1][0].product_id == mention.product_id and single:
            merged[-1] = (merged[-1][0], merged[-1][1] + " " + segment)
            continue
        merged.append((mention, segment))
    return merged


# ----------------------------------------------------------------------------------- returns
_KEPT_ITEM = re.compile(
    r"\b(keep|keeping|kept|not|except|but not|don'?t|stays?|staying|leave)\b", re.IGNORECASE
)
# A negation keeps an item when it governs the item ("not the mug", "but not my lamp") or the return
# itself ("don't send back the mug"); one that describes the item ("it does not suit me", "doesn't
# work") keeps nothing.
_NEGATED_MENTION = re.compile(r"\b(?:not|n't|never|no)\s+(?:\w+\s+){0,2}$", re.IGNORECASE)
_NEGATED_RETURN = re.compile(
    r"\b(?:don'?t|do not|won'?t|will not|not)\s+(?:\w+\s+){0,2}?(?:return|send|ship|refund)\w*\b",
    re.IGNORECASE)
# "I'm keeping everything else", "keep the rest", "everything else stays": what is kept is the rest,
# not this item.
_THE_REST = (r"(?:everything(?: else)?|the rest|all (?:the )?rest|all else|the others?|"
             r"the other (?:items?|things?|stuff))")
_REST_STAYS = (r"(?:everything else|the rest|all else|the others?|the other (?:items?|things?|stuff))"
               r"(?:\s+(?:of (?:it|them|the order)"
               r"|in (?:the|that|this|my) (?:order|box|package|parcel|delivery)))?\s+"
               r"(?:(?:can|will|should|may|is going to|are going to|is|are|i'?ll|i'?m|i)\s+)?"
               r"(?:stays?|staying|remains?|remaining|keep(?:ing)?|fine|ok(?:ay)?|good)\b")
_KEEPING_THE_REST = re.compile(
    r"\b(?:keep|keeping|kept)\s+(?:\w+\s+)?" + _THE_REST + r"\b|\b" + _REST_STAYS, re.IGNORECASE)
_REST_KEPT_AFTER = re.compile(r"^\s*" + _REST_STAYS, re.IGNORECASE)
_KEEP_VERB = re.compile(r"\b(keep|keeping|kept|except|stays?|staying|leave|leaving)\b"
                        r"|留着|留下|保留|不退|除了", re.IGNORECASE)


# "I bought it for my nephew when he was staying with us": a person who stays (or leaves) somewhere,
# not an item kept out of the return.
_A_PERSON_STAYS = re.compile(
    r"\b(?:i|he|she|we|they|you|u)(?:'m|'re|'s|’m|’re|’s)?\s+(?:(?:was|were|is|are|am|will|'ll|be|been|"
    r"have|has|had|to|gonna|going to)\s+){0,2}(?:stay|stays|stayed|staying|leave|leaves|leaving|left)\b"
    r"(?=\s+(?:with|at|in|for|on|over|here|there|home|town|tomorrow|today|tonight|soon|next)\b)",
    re.IGNORECASE)


_JOINING = frozenset({"and", "or", "the", "my", "both", "also", "plus", "&", ",", "+", "和", "跟", "还有"})
# ("the puzzle, the notebook I keep" joins none)
_CONJUNCTIONS = frozenset({"and", "or", "plus", "&", "+", "和", "跟", "还有"})


def _kept_in_lists(text: str, segments: Sequence[tuple[Any, str]]) -> list[bool]:
    """Per product segment, is it kept out of the return? A product joined to the next one by "and"
    alone ("chair and clock are staying") is kept with it."""
    kept = [_kept(segment, text[m.span[0]:m.span[1]]) for m, segment in segments]
    for i in range(len(segments) - 2, -1, -1):
        between = text[segments[i][0].span[1]:segments[i + 1][0].span[0]]
        joins = set(re.findall(r"[\w&+'-]+|,", between.lower())) if not has_ideographs(between) \
            else {between.strip(" ，,、")} - {""}  # "拼图和哑铃我留着": "和" joins them
        if kept[i + 1] and not kept[i] and joins & _CONJUNCTIONS and joins <= _JOINING:
            kept[i] = True
    return kept


def _kept(segment: str, surface: str) -> bool:
    """Do the words of one product's segment keep it out of the return? Only the words from the
    last connector before the mention count ("I'm keeping everything else, but I might send the
    fleece back" returns the fleece)."""
    at = segment.lower().find(surface.lower()) if surface else -1
    if at >= 0:
        opening = _last_connector(segment, 0, at) or 0
        segment, at = segment[opening:], at - opening
    cleaned = _KEEPING_THE_REST.sub(" ", _NOT_KEEPING.sub(" ", _NOT_EVERYTHING.sub(" ", segment)))
    cleaned = _A_PERSON_STAYS.sub(" ", cleaned)
    if _KEEP_VERB.search(cleaned) or _NEGATED_RETURN.search(cleaned):
        return True
    return at >= 0 and bool(_NEGATED_MENTION.search(segment[:at]))


_EVERYTHING = re.compile(
    r"\b(everything|all (?:the |of the )?(?:items|things|of it|of them)|whole order|"
    r"entire order|all of my order|the lot)\b",
    re.IGNORECASE,
)
_THATS_ALL = re.compile(r"\bthat(?:'s|’s| is)\s+(?:all|everything|it)(?: of (?:it|them))?\b", re.IGNORECASE)
# "the backpack, not the whole order": ruling out the rest says the item alone, it keeps nothing.
_NOT_EVERYTHING = re.compile(
    r"\b(?:not|n't|rather than|instead of)\s+(?:\w+\s+){0,2}?"
    r"(?:everything|all of (?:it|them)|(?:the )?(?:whole|entire|full) order)\b",
    re.IGNORECASE,
)
# Negations that keep nothing: a complaint that the item is not what was ordered ("the wrong boots,
# not what I picked", "not as described") describes the item sent, and a remedy declined ("I don't
# want a replacement", "no exchange") says how, not which items.
_NOT_KEEPING = re.compile(
    r"\bnot (?:what|the (?:one|ones|item|size|colou?r)|as) (?:i|we|you) (?:\w+ )?"
    r"(?:ordered|order|picked|chose|selected|bought|wanted|expected|asked for|paid for|showed|listed)\b"
    r"|\bnot as (?:described|pictured|advertised|shown|listed)\b"
    r"|\b(?:don'?t|do not|doesn'?t|not) (?:want|need|looking for) (?:a |an |any )?(?:new |another )?"
    r"(?:replacement|exchange|swap|store credit|gift card|repair)s?\b"
    # a keeping denied is a return said: "I'm not keeping it", "I don't want to keep it"
    r"|\b(?:not|never|no longer|won'?t|don'?t|do not|can'?t|cannot)\s+(?:\w+\s+){0,2}?(?:keep|keeping)\b",
    re.IGNORECASE,
)
# ("no sound at all" counts nothing; "one of my speakers" is one of them: `_several_meant`)
_BOTH = re.compile(r"\b(both|(?<!at )all(?! (?:day|night|week|the time|along)\b)|two|2|three|3|each)\b",
                   re.IGNORECASE)
# ("two of the same jackets ... I only need one, so can I send the extra one back?": one of them)
_JUST_ONE = re.compile(r"\b(?:one of|just one|only one|only (?:need|want|keep|use) one|the extra one"
                       r"|an extra one|the spare one|one too many)\b", re.IGNORECASE)


def _several_meant(text: str) -> bool:
    """Do the words mean every one of a product's items ("both", "all", "the two")?"""
    return bool(_BOTH.search(text)) and not _JUST_ONE.search(text)
_BOTH_ITEMS = re.compile(r"\b(both|the two|the pair of them)\b", re.IGNORECASE)


def option_values(lines: Sequence[Line]) -> dict[str, list[str]]:
    """{option: the values the lines have}."""
    values: dict[str, list[str]] = {}
    for line in lines:
        for key, value in line.options.items():
            values.setdefault(key, []).append(value)
    return values


def names_option_of(text: str, lines: Sequence[Line]) -> bool:
    """Do the words name an option value some of `lines` have and others not ("the grey one")?"""
    values = {k: v for k, v in option_values(lines).items() if len(set(v)) > 1}
    return bool(values) and bool(find_option_values(text, values))


def _described_lines(segment: str, lines: Sequence[Line]) -> list[Line]:
    """Of several lines of one product, those the option words pick: the values named (not after a
    negation) that some lines have, minus the lines with a value named after one ("the green one,
    not the black"). Empty when the words tell none apart."""
    hits = find_option_values(segment, option_values(lines))
    toks = tokens(segment)
    shared = {k: v for k, v in lines[0].options.items() if all(x.options.get(k) == v for x in lines)}
    telling = [h for h in hits if shared.get(h.key) != h.value]  # a value every line has tells nothing
    if not telling:
        return []
    wanted = [h for h in telling if not negated_option(toks, h, telling)]
    unwanted = [h for h in telling if negated_option(toks, h, telling)]
    picked = [x for x in lines if any(x.options.get(h.key) == h.value for h in wanted)] if wanted \
        else list(lines)
    picked = [x for x in picked if not any(x.options.get(h.key) == h.value for h in unwanted)]
    return picked if 0 < len(picked) < len(lines) else []


def names_option_offered(text: str, lines: Sequence[Line], variants: Mapping[str, Sequence[Variant]]) -> bool:
    """Do the words name an option value the lines' products come in that the lines do not have
    ("the red stainless steel one" about a black glass bottle)?"""
    offered: dict[str, set[str]] = {}
    for line in lines:
        for variant in variants.get(line.product_id, ()):
            for key, value in variant.options.items():
                if line.options.get(key) != value:
                    offered.setdefault(key, set()).add(value)
    return bool(offered) and bool(find_option_values(text, offered))


def line_by_options(text: str, order: OrderView) -> Line | None:
    """ "I'll keep the 34 inch. Send back the 28 inch one": no product named, the one line of the
    order whose own option values the words name (values no other line has), in a sentence that
    keeps nothing; None when none or several fit."""
    said = " ".join(s for s in re.split(r"(?<=[.!?;])\s+", text) if not _KEEP_VERB.search(s))
    if not said.strip():
        return None
    hits = find_option_values(said, option_values(order.lines))
    toks = tokens(said)
    own = [x for x in order.lines
           if any(x.options.get(h.key) == h.value and not negated_option(toks, h)
                  and sum(1 for y in order.lines if y.options.get(h.key) == h.value) == 1 for h in hits)]
    return own[0] if len({x.item_id for x in own}) == 1 else None


def resolve_return_lines(text: str, order: OrderView) -> list[Line] | None:
    """The lines of `order` the customer returns ("the kettle and the hose, I'm keeping the camera"),
    None when the words name none of them. "Everything" is every line (but those kept: "everything
    except the bottle"); a product of which the order
    holds several is every one of them with "both"/"all", else the one its option words describe
    (the first of those they fit best: `read_return_lines` says when that is a guess)."""
    return read_return_lines(text, order)[0] or None


def names_order_by_items(text: str, order: OrderView) -> bool:
    """Do the words name the order's products only to say which order ("cancel the order with the
    black chair", "cancel the bookshelf order")?"""
    mentions = product_mentions(text, order.products(), own=True)
    describing = identifying_order(text, mentions)
    return bool(mentions) and all(m in describing or _NAMES_THE_ORDER.match(text[m.span[1]:])
                                  for m in mentions)


# "the order with the black ...", "the backpack that's coming with my grill", "the t-shirt I ordered
# along with the vacuum": an order described by what else it holds, a few words of that before
_ORDER_WITH = re.compile(
    r"\b(?:(?:order|one|purchase|package|parcel|shipment|delivery|box)\s+(?:with|containing|"
    r"that (?:has|had|holds)|which (?:has|had|holds)|that came with)|(?:coming|arriving|shipping|shipped|"
    r"ordered|bought|got|purchased|received|came|comes|together|along)\s+with"
    r"|same (?:order|package|parcel) as)"
    r"\s+(?:[\w-]+\s+){0,3}$", re.IGNORECASE)
# what joins a second product to the first in that description ("the order with the pet bed and the
# bookshelf")
_AND_THE = re.compile(r"^\s*(?:,|and|&|\+|or)\s*(?:also\s+)?(?:the\s+|my\s+|a\s+|an\s+)?(?:[\w-]+\s+){0,2}$",
                      re.IGNORECASE)


def identifying_order(text: str, mentions: Sequence[Any]) -> list[Any]:
    """The product mentions that only say which order the words are about ("the grey backpack that's
    coming with my grill": the grill), not items of it the customer asks about."""
    found: list[Any] = []
    previous = None
    for m in sorted(mentions, key=lambda m: m.span[0]):
        if _ORDER_WITH.search(text[: m.span[0]]) or (
                previous is not None and previous in found and previous.span[1] <= m.span[0]
                and _AND_THE.match(text[previous.span[1]: m.span[0]])):
            found.append(m)
        previous = m
    return found


# "my pet bed order", "the kettle one", "the headphones package": a product naming which order
_NAMES_THE_ORDER = re.compile(r"^\s*(?:order|one|purchase|package|parcel|shipment|delivery)\b", re.IGNORECASE)


def items_asked_about(text: str, order: OrderView) -> list[str]:
    """The products of the order a question asks about ("what did the pet bed cost me", "what size
    were the boots"), not those that only say which order it is ("what's in the order with the pet
    bed?", "my pet bed order"): their product ids, in the order named."""
    mentions = product_mentions(text, order.products(), own=True)
    describing = identifying_order(text, mentions)
    asked = [m for m in mentions if m not in describing and not _NAMES_THE_ORDER.match(text[m.span[1]:])]
    return list(dict.fromkeys(str(m.product_id) for m in sorted(asked, key=lambda m: m.span[0])))


def read_return_lines(text: str, order: OrderView) -> tuple[list[Line], list[Line]]:
    """(the lines returned, as `resolve_return_lines` reads them but [] for none; the lines of one
    product the words name but do not tell apart: "return the pet bed" about an order holding a
    beige and a grey one, whose customer is asked which, never given one). The second is empty when
    every product named is one clear line (or "both", or identical ones)."""
    text = _THATS_ALL.sub(" ", text)  # "perfect, that's all of it": the list is complete, not "everything"
    if _EVERYTHING.search(text) and not _KEPT_ITEM.search(text):
        return list(order.lines), []
    mentions = sorted(product_mentions(text, order.products(), own=True), key=lambda m: m.span[0])
    # "the T-shirt from the order with the wristwatch", "the shoes from my espresso machine order":
    # not the watch, nor the espresso machine
    describing = [*identifying_order(text, mentions),
                  *(m for m in mentions if _NAMES_THE_ORDER.match(text[m.span[1]:]))]
    mentions = [m for m in mentions if m not in describing] or mentions
    if not mentions and len(order.lines) == 2 and _BOTH_ITEMS.search(text):
        return list(order.lines), []  # "return both items" of an order of two
    if not mentions:
        return [], []
    by_span: dict[tuple[int, int], set[str]] = {}
    for m in mentions:
        by_span.setdefault(m.span, set()).add(m.product_id)
    shared = next((ids for ids in by_span.values() if len(ids) > 1), None)
    if shared and not _several_meant(text):
        # "return my kettle" about an order with an Electric Kettle and a Tea Kettle: the word names
        # both products; which one is asked, never both sent back.
        lines = [x for x in order.lines if x.product_id in shared]
        described = _described_lines(text, lines) if len(by_span) == 1 else []
        if len(described) == 1:
            return described, []  # "the kettle which is made of plastic, the silver one": its options say
        if len(lines) > 1:
            return [], lines
    segments = _merge_repeats(_segments(text, mentions), order)
    cleaned = _NOT_EVERYTHING.sub(lambda m: " " * len(m.group(0)), text)
    everything = [m for m in _EVERYTHING.finditer(cleaned)
                  if not _KEEP_VERB.search(cleaned[max(0, m.start() - 20):m.start()])
                  and not _REST_KEPT_AFTER.match(cleaned[m.start():])]  # "everything else stays"
    if everything:
        # "everything except the water bottle": every line but those of the products kept (not
        # "I'm keeping everything else but the fleece")
        kept = {m.product_id for m, segment in segments if _kept(segment, text[m.span[0]:m.span[1]])}
        rest = [x for x in order.lines if x.product_id not in kept]
        if kept and rest:
            return rest, []
    chosen: list[Line] = []
    undecided: list[Line] = []
    kept_ones = _kept_in_lists(text, segments)
    for (mention, segment), kept_one in zip(segments, kept_ones, strict=True):
        lines = [x for x in order.lines if x.product_id == mention.product_id and x not in chosen]
        rest = _not_kept(segment, lines) if kept_one and len(lines) > 1 and _THE_OTHER.search(segment) else []
        if len(rest) == 1:
            # of two, "keep the waterproof one and send the other back" returns the other (whatever
            # else describes them: "one waterproof and one not")
            chosen.extend(rest)
            continue
        if kept_one and len(lines) > 1:
            # "return the 17 inch silver one, keep the 15 inch black": the options said outside the
            # keeping words pick the line returned, less any the keeping words describe
            keeping = {x.item_id for part in _KEEP_PART.finditer(segment)
                       for x in _described_lines(part.group(0), lines)}
            returned = [x for x in _described_lines(_KEEP_PART.sub(" ", segment), lines)
                        if x.item_id not in keeping]
            if returned:
                chosen.extend(returned)
                continue
            # "The shorter one I want to return, the longer one I keep": a degree word in the part
            # that returns picks it (`comparatives.pick_by_degree`)
            from csagent.grounding.comparatives import pick_by_degree

            asking = [p for p in re.split(r"[,;.!?]", segment) if _RETURN_VERB.search(p)]
            picked = next((d for d in (pick_by_degree(_KEEP_PART.sub(" ", p), [x.options for x in lines])
                                       for p in asking) if d is not None), None)
            if picked is not None:
                chosen.append(lines[picked])
                continue
        described = _described_lines(segment, lines) if len(lines) > 1 else []
        if not described and len(lines) > 1:
            # "The Brand B one I already opened, but the dark Brand C one is still sealed. Could I
            # send back just the sealed Brand C one?": each described, the one the asking sentence does
            asking = [x for x in re.split(r"(?<=[.!?;])\s+", segment) if _RETURN_VERB.search(x)]
            described = _described_lines(asking[-1], lines) if asking else []
        if described:  # "only the green one, not the black", "the 3 ft one": the options decide
            chosen.extend(described)
            continue
        if kept_one:
            continue  # "the security camera I'm keeping", "not the blue one"
        if not lines:
            continue
        if len(lines) > 1 and not _several_meant(segment):
            hits = find_option_values(segment, option_values(lines))
            fits = [_line_fit(x, segment, hits) for x in lines]
            tied = [x for x, fit in zip(lines, fits, strict=True) if fit == max(fits)]
            several = len({x.item_id for x in tied}) > 1
            degree = _by_degree(text, mention, mentions, tied, segment) if several else None
            if degree is not None:
                tied = [degree]  # "the tall glass bookshelf": the taller of the two
            if len({x.item_id for x in tied}) > 1:
                undecided.extend(tied)
            lines = tied[:1]
        chosen.extend(lines)
    return chosen, undecided


# The verb of a return ("send back just the sealed one", "return the 8 inch").
_RETURN_VERB = re.compile(r"\b(?:return\w*|(?:send|sent|ship|mail)\w*\s+(?:\w+\s+){0,3}?back|refund\w*)\b",
                          re.IGNORECASE)
_THE_OTHER = re.compile(r"\bthe other(?: one)?\b|\bother one\b", re.IGNORECASE)
_KEEP_PART = re.compile(r"\b(?:keep|keeping|kept)\b[^,;.!?]*?(?=\band\b|\bbut\b|[,;.!?]|$)", re.IGNORECASE)


def _not_kept(text: str, lines: Sequence[Line]) -> list[Line]:
    """Of several lines of a product, those the words do not keep by an option value only some of
    them have ("keep the waterproof one"); all of them when the words keep none that way."""
    kept_words = " ".join(m.group(0) for m in _KEEP_PART.finditer(text))
    if not kept_words:
        return list(lines)
    kept = _described_lines(kept_words, lines)
    return [x for x in lines if x not in kept] if kept else list(lines)


def _by_degree(text: str, mention: Any, mentions: Sequence[Any], lines: Sequence[Line],
               segment: str = "") -> Line | None:
    """The one of several lines of a product that a degree word before its name ("the tall glass
    bookshelf", "the shorter of my two skateboards") or in its `segment` ("the bigger one") picks
    out (`comparatives.pick_by_degree`); None when none does. The words before the name start
    after the product named before it."""
    from csagent.grounding.comparatives import pick_by_degree

    start = max((m.span[1] for m in mentions if m.span[1] <= mention.span[0]), default=0)
    for words in (text[start:mention.span[1]], segment):
        picked = pick_by_degree(words, [x.options for x in lines]) if words else None
        if picked is not None:
            return lines[picked]
    return None
