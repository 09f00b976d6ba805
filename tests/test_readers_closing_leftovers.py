"""The leftovers of the log readers and the labelling rule named by stop 60's closing note: each test fails on the
code before its fix (a guard that passes before says so)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("said, value", [
    ("The report says total number of users 123,456 this month; record that figure.", 123456),
    ("Count of customers 204,305 as of today, record it.", 204305),
    ("The number of active users 123,456 is up; log it.", 123456),  # a tally word right before: as before
])
def test_a_count_said_before_its_noun_and_of_is_one_number(said, value):
    """People are counted only after a word that says a count (active users 123,456), so the number after 'total
    number of users' was read as a list of two ids, 123 and 456, and the count a later call passed said by no event.
    A count's noun and 'of' before the noun say a count too; 'of' alone does not (a list of users 123,456)."""
    from shell_calls import decide

    from sam_model.data.sayings import says
    from sam_model.data.text import norm

    d = decide("record_metric", {"value": value}, said)
    assert d.labels == [0] and d.needed
    assert not says(norm(said), str(value)[3:])
    listed = "Ban a list of users 123,456 from the channel."
    assert says(norm(listed), "456") and decide("ban_user", {"user_id": "456"}, listed).labels == [0]
