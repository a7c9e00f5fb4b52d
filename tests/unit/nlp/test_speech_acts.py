"""Speech acts of a clause: a change ruled out, and whether it asks anything at all."""

from __future__ import annotations

import pytest

from csagent.nlp.speech_acts import (
    asks_for_advice,
    asks_for_change,
    asks_something,
    declines_change,
    is_elliptical,
    is_hypothetical,
    weighs_a_change,
)


@pytest.mark.parametrize(("text", "declined"), [
    ("dont cancel my bike order", True),
    ("I'm not looking to cancel anything", True),
    ("Please don't cancel it or change anything", True),
    ("I do not want to cancel it", True),
    ("cancel my order", False),
    ("I don't want to return the whole order, only the scarf", False),  # a contrast: still a request
    ("I never wanted blue, make them black", False),                      # the negation is not the verb's
    ("not the first order, cancel the other one", False),
    ("keep the thermostat order, no cancelling", True),                    # a gerund after "no"
    ("not cancelling anything, just want to know where it is", True),
    ("No, cancel it", False),                                              # "no" answers; it asks to cancel
    # the first change named is asked for; what is ruled out after it is another thing left alone
    ("can u cancel the one that hasnt shiped yet, dont touch the one with the phone", False),
    ("please tell me where it is, dont cancel it", True),                  # "tell" names no change
])
def test_a_change_named_only_to_rule_it_out(text: str, declined: bool) -> None:
    assert declines_change(text) is declined


@pytest.mark.parametrize(("text", "asks"), [
    ("want my money back", True),          # the wish, its subject left out
    ("give me my money back", True),
    ("ok wanna return it", True),
    ("did i get my money back?", False),
    ("want to know if I can return it?", False),  # information asked (`info_requests`)
    # where an order should go is a wish for it to go there
    ("the lamp order should go to my office instead", True),
    ("which address should it go to?", False),
])
def test_a_wish_without_its_subject_asks_for_the_change(text: str, asks: bool) -> None:
    from csagent.nlp.speech_acts import asks_for_change

    assert asks_for_change(text) is asks


@pytest.mark.parametrize(("text", "asks"), [
    ("wheres my bike helmet", True),
    ("tracking numbr?", True),
    ("I would simply like to know where my pet bed order stands", True),
    ("return the lamp", True),
    ("My aunt gave me a gift card for my birthday", False),
    ("I got burned by another shop that took like a month", False),
    ("My old card got cancelled", False),
])
def test_a_clause_asks_something_or_only_sets_the_scene(text: str, asks: bool) -> None:
    assert asks_something(text) is asks


@pytest.mark.parametrize(("text", "asks"), [
    ("帮我把咖啡机那个订单取消了吧", True),
    ("茶壶我想改成2升的", True),
    ("瑜伽垫如果退货的话，能退我多少钱？", False),
    ("可以取消吗？", False),
])
def test_a_chinese_clause_asks_for_the_change_or_about_it(text: str, asks: bool) -> None:
    from csagent.nlp.speech_acts import asks_for_change

    assert asks_for_change(text) is asks


@pytest.mark.parametrize(("text", "names", "elliptical"), [
    ("and the tablet one?", ["tablet"], True),
    ("what about my other order?", [], True),
    ("how about the blue one", ["blue"], True),
    ("the lamp order?", ["lamp"], True),
    ("and cancel the tablet one", ["tablet"], False),        # a request of its own
    ("the tablet is broken?", ["tablet"], False),            # says something about it
    ("and the tablet one", [], False),                       # names nothing found
    ("my tablet", ["tablet"], False),                        # neither a follow-up word nor a question
])
def test_a_follow_up_that_only_names_something_new(text: str, names: list[str], elliptical: bool) -> None:
    assert is_elliptical(text, names) is elliptical


@pytest.mark.parametrize(("text", "hypothetical"), [
    ("Would it be possible to switch the payment for order #W1080318 to my gift card?", False),
    ("would it cost more?", True),
    ("would it be possible to return it? how much would I get back", True),
])
def test_a_polite_formula_is_no_hypothesis(text: str, hypothetical: bool) -> None:
    assert is_hypothetical(text) is hypothetical


@pytest.mark.parametrize(("text", "opens"), [
    ("and to a gift card?", True), ("what about exchanges?", True), ("to a gift card?", False),
    ("android phones?", False),
    # an acknowledgement before the follow-up word
    ("k what about the dumbbells", True), ("ok got it, and for the lamp?", True), ("ok cancel it", False)])
def test_a_follow_up_opens_with_a_follow_up_word(text: str, opens: bool) -> None:
    from csagent.nlp.speech_acts import opens_follow_up

    assert opens_follow_up(text) is opens


@pytest.mark.parametrize(("text", "changes"), [
    ("need to chnage the shiping adress for my e-reader", True),  # a slip in the verb
    ("could u flip it to my other place", True),
    ("send it to my home address instead", True),
    ("wat adress is it goin to", False),
    ("I want to check the address for my tea kettle order", False),
    ("Which address is it being shipped to?", False),
    ("is it shipping to my old place?", False),  # "place" is no slip of "replace"
    ("i need that at my place in san diego", True),  # where it is needed
])
def test_words_that_ask_for_another_address(text: str, changes: bool) -> None:
    from csagent.nlp.speech_acts import names_address_change

    assert names_address_change(text) is changes


@pytest.mark.parametrize(("text", "asks"), [
    # a wish inside a condition is no request: the clause asks whether it is allowed
    ("if I only want to send back one thing from an order, is that allowed?", False),
    ("if I want to return the kettle how do I do it", False),
    # a request beside its condition still is one, with or without a comma between them
    ("if it has not shipped, please cancel it", True),
    ("If it hasn't shipped yet can you cancel it?", True),
    ("I would like to return it if possible", True),
])
def test_a_request_phrase_inside_a_condition_asks_for_nothing(text: str, asks: bool) -> None:
    from csagent.nlp.speech_acts import asks_for_change

    assert asks_for_change(text) is asks


@pytest.mark.parametrize(("text", "asks"), [
    # a wish denied asks for nothing
    ("I don't want to lose it", False),
    ("we never wanted to keep it", False),
    # a wish, and a change verb beside a denial, still do
    ("I want to return it", True),
    ("i dont want to wait, just cancel it", True),
])
def test_a_denied_wish_is_no_request(text: str, asks: bool) -> None:
    from csagent.nlp.speech_acts import asks_for_change

    assert asks_for_change(text) is asks


@pytest.mark.parametrize(("text", "asks"), [
    # a change told as forgotten was not made, and is not asked for
    ("I moved to Austin and clearly forgot to update my address", False),
    # "do the X ..." with a verb of what a thing is or does asks about it
    ("do the running shoes come in a 10", False),
    ("do my headphones work with an iphone", False),
    ("do the exchange for a size 10", True),
    # a change verb in slang
    ("yo can u nuke the coffee maker order", True),
    # a change word after a determiner is a noun; what someone could do, options told
    ("For a return, I could either get the refund on my card or on my gift card", False),
    ("I could return it I guess", False),
    ("Could I get the refund on my card instead?", True),
    ("you could just send me a new one", True),
])
def test_a_clause_that_tells_or_asks_about_a_thing_asks_for_no_change(text: str, asks: bool) -> None:
    from csagent.nlp.speech_acts import asks_for_change

    assert asks_for_change(text) is asks


@pytest.mark.parametrize(("text", "asks"), [
    # a change only weighed is asked about, not for
    ("I am keeping everything else from that delivery, but I might send the fleece jacket back", False),
    ("I may want to cancel it", False),
    ("I'm thinking of returning the blender", False),
    # a discourse marker hedges nothing
    ("Actually, thinking about it, I'd like to return it - refund to the original payment method.", True),
    ("please cancel it", True),
    # a wish to keep what they have asks for no change
    ("I really want to keep that one!", False),
    ("I'd rather keep those, thanks", False),
    ("I want to return that one", True),
])
def test_a_change_only_weighed_is_not_asked_for(text: str, asks: bool) -> None:
    from csagent.nlp.speech_acts import asks_for_change

    assert asks_for_change(text) is asks


def test_a_need_that_is_not_the_customers_asks_for_nothing() -> None:
    from csagent.nlp.speech_acts import asks_for_change

    assert asks_for_change("my white desk lamp, it need to be plug in the wall?") is False
    assert asks_for_change("I need to return the lamp") is True


@pytest.mark.parametrize(("text", "asks"), [
    # asking leave for one's own change, with a courtesy word, is the polite request
    ("Could I move order #W1 from my gift card to PayPal, please?", True),
    ("can we switch it to the black one pls?", True),
    # without one it asks whether it can be done; a question word keeps "please" a softener
    ("could I move order #W1 to PayPal?", False),
    ("how much would I get back if I returned it, please?", False),
])
def test_asking_leave_politely_asks_for_the_change(text: str, asks: bool) -> None:
    from csagent.nlp.speech_acts import asks_for_change

    assert asks_for_change(text) is asks


@pytest.mark.parametrize(("text", "checks"), [
    ("Just want to double check it's going to Maple Drive and not to my apartment in San Antonio?", True),
    ("just making sure the kettle order ships to Austin", True),
    ("I want to change the address to 12 Main St, Springfield, IL 62704", False),
    # an indirect request is no check
    ("I was wondering whether I could return the robot vacuum", False),
])
def test_asking_to_have_something_checked_asks_for_no_change(text: str, checks: bool) -> None:
    from csagent.nlp.speech_acts import asks_for_change, asks_to_have_it_checked

    assert asks_to_have_it_checked(text) is checks
    if checks:
        assert asks_for_change(text) is False


@pytest.mark.parametrize(("text", "asks"), [
    ("帮我取消订单", True),          # a request marker
    ("能退吗", True),                # a question marker
    ("今天外面好冷啊，哈哈", False),  # chat
])
def test_a_chinese_clause_asks_by_its_markers(text: str, asks: bool) -> None:
    from csagent.nlp.speech_acts import asks_something

    assert asks_something(text) is asks


@pytest.mark.parametrize(("text", "keeps"), [
    ("keep the bookshelf order as is though", True),
    ("no no, leave it as it is then", True),
    ("I still want it", True),
    ("I keep getting charged twice for my order", False),  # "keep" is no imperative here
    ("cancel the lamp order", False),
])
def test_a_clause_that_keeps_things_as_they_are(text: str, keeps: bool) -> None:
    from csagent.nlp.speech_acts import keeps_as_is

    assert keeps_as_is(text) is keeps


@pytest.mark.parametrize(("text", "weighs"), [
    ("the white helmet. Before I decide, what would I get back?", True),
    ("I haven't decided yet, how much is the refund?", True),
    ("the white helmet, go ahead and return it", False),
    ("我还没决定", True),  # (Chinese by its own phrases: "还没决定", "在考虑要不要")
    ("好的，帮我退掉", False),
])
def test_an_answer_that_holds_the_decision_back_only_weighs_the_change(text: str, weighs: bool) -> None:
    assert weighs_a_change(text) is weighs


@pytest.mark.parametrize(("text", "names"), [
    ("and #W1780552", ["#W1780552"]),          # an order id, as a product, is what the follow-up names
    ("and the espresso machine one", ["espresso machine"]),
])
def test_a_follow_up_naming_only_an_order_or_a_product_is_elliptical(text: str, names: list[str]) -> None:
    assert is_elliptical(text, names)


@pytest.mark.parametrize(("text", "advice"), [
    ("Any ideas before I lose my mind?", True),
    ("whats up with that??", True),
    ("What I must do?", True),
    ("so what should I do now", True),
    ("怎么办？", True),
    ("anything i can try before i freak out?", True),  # (typos are spelt right before this)
    ("What should I do with it?", True),
    ("What do you recommend?", True),
    ("what would you suggest", True),
    ("what do you recommend for a gift", False),  # names something of its own
    ("what do I do with the old one", False),   # names something of its own
    ("what should I do with the refund money?", False),
    ("Any update on my order?", False),
    ("Can you help me with my order?", False),
])
def test_a_request_for_advice_naming_nothing_of_its_own(text: str, advice: bool) -> None:
    assert asks_for_advice(text) is advice


@pytest.mark.parametrize(("text", "asks"), [
    # a wish to do something that changes nothing, or words that tell what the store did or how
    # something is, ask for no change
    ("lowkey wanna wear my new earbuds at the pool lol", False),
    ("I would like to know where my order is", False),
    ("I think you take money two times from my gift card", False),
    ("Sorry my mistake, PayPal is correct", False),
    # a wish to change something does, after a dash or a comma too
    ("wanna cancel my order", True),
    ("I would like to have it sent to my office", True),
    ("keyboard i ordered - want clicky switches instead of tactile", True),
    ("I want to give back the notebook and the tea kettle, both", True),  # a verb with "back" names one
    ("correct the address please", True),
])
def test_what_asks_for_a_change_and_what_only_tells(text: str, asks: bool) -> None:
    assert asks_for_change(text) is asks


@pytest.mark.parametrize(("text", "asks"), [
    # where a thing is to go, with the thing as subject, asks for it to go there
    ("it needs to go to 1200 ocean drive apt 5b, miami florida 33139", True),
    ("the order must be shipped to 12 Main St, Springfield, IL 62704", True),
    ("it has to go to my office now", True),
    # the customer going somewhere, or the question where it should go, does not
    ("I need to go to work soon", False),
    ("which address should it go to?", False),
    ("it was supposed to go to my work address", False),
    ("it doesnt need to go to my work address", False),
    # "u" for "you"; a preference asks, unless for nothing to change
    ("can u cancel it?", True),
    ("could u switch it to paypal", True),
    ("I'd much rather it were charged to my Mastercard instead", True),
    ("I'd rather not say", False),
    ("i'd rather keep it as it is", False),
    ("can u tell me where it is", False),
])
def test_where_a_thing_should_go_and_what_one_would_rather(text: str, asks: bool) -> None:
    assert asks_for_change(text) is asks
