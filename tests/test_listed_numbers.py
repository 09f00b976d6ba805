"""A list of numbers written with no space after its commas (ids 123,456) has the shape of one number with
thousands separators, which is how it had been read: its items were said by no event, so the order a user listed
was untraceable. A plural noun right before it says it is a list; an amount (3,500 after $, costs, a budget of)
stays one number, which says no 500."""

from __future__ import annotations

import pytest
from shell_calls import decide

from sam_model.data.sayings import says, whole_amount
from sam_model.data.text import norm


@pytest.mark.parametrize("said, value", [
    ("Please check orders 123,456 and 789.", "456"),
    ("Please check orders 123,456 and 789.", "123"),
    ("Can you cancel reservations 204,305?", 305),
    ("The failing ids 123,456 are both mine.", "456"),
])
def test_an_item_of_a_list_a_plural_noun_names_is_traced_to_it(said, value):
    d = decide("get_order_details", {"order_id": value}, said)
    assert d.labels == [0] and d.needed


@pytest.mark.parametrize("text, value", [
    ("My budget for the trip is $3,500.", "500"),
    ("The upgrade costs 3,500 in total.", "500"),
    ("It totals 3,500.", "500"),
    ("I have loyalty miles 3,500 left.", "500"),
    ("ids 1,234.50", "234"),  # decimals: an amount
    ("123,456 and 789", "456"),  # no noun: one number, as before
    ("Results: 1,234 rows", "234"),  # a count after a colon
    ("this 123,456", "456"),
    ("see [204,305,412]", "999"),  # a JSON list: its items only
])
def test_an_amount_says_no_number_inside_it(text, value):
    assert not says(norm(text), value)


def test_a_listed_pair_says_no_thousands_number_but_an_amount_does():
    """The whole number a list's shape reads as (123456) is not said by the list; 3,500 still says 3500."""
    assert not whole_amount(norm("ids 123,456"), "123,456")
    assert whole_amount(norm("a budget of $3,500"), "3,500") and whole_amount(norm("123,456 and 789"), "123,456")
    d = decide("add_payment", {"amount": 123456}, "Please check orders 123,456 and 789.")
    assert d.labels == []
    d = decide("add_payment", {"amount": 3500}, "My budget is $3,500.")
    assert d.labels == [0]
    assert says(norm("see [204,305,412]"), "305")


@pytest.mark.parametrize("said, value", [
    ("The dashboard shows active users 12,345 this week; log that figure.", 12345),
    ("My daily steps 10,000 is the goal, please set it.", 10000),
    ("The warehouse holds items 1,000,000 in stock, reorder that many.", 1000000),
    ("Weekly report: sessions 45,678 and pageviews 120,000.", 120000),
])
def test_a_count_after_its_noun_is_one_number(said, value):
    """A count after a plural noun is one number where its groups are no list's items (a first group shorter than
    three digits, a group 000): it had been read as a list, so a call passing the count traced to no event."""
    d = decide("record_metric", {"value": value}, said)
    assert d.labels == [0] and d.needed
    assert not says(norm(said), "345" if value == 12345 else "000")
