"""Which argument values are not traced at all: the spec's trivial values, and free text.

A value such as ``yes``, ``12`` or a sentence of prose is said by many events for reasons of their own: traced, it
would be labelled with whichever event said it first. The spec judges such a leaf trivial before any search
(:func:`is_trivial`), and the running constraints keep no free text (:func:`is_free_text`). It is a rule about the
value alone, asked before any event is read, so it stands apart from the search (:mod:`sam_model.data.sayings`) and
from the state that asks it (:mod:`sam_model.data.toolstate`).
"""

from __future__ import annotations

import re
from typing import Any

from sam_model.data.text import norm

_TRIVIAL_WORDS = frozenset({"yes", "no", "true", "false", "none", "null", "n/a"})
NUMBER = re.compile(r"[+-]?\d+(\.\d+)?")  # a normalised number (sayings.number_forms reads it too)


def is_free_text(s: str) -> bool:
    """A normalised string longer than 100 characters or of more than 8 words: prose, not a value."""
    return len(s) > 100 or len(s.split()) > 8


def is_trivial(path: str, value: Any) -> bool:
    """Values too common or too vague to trace: None, booleans, numbers (and all-digit strings) of fewer than 3
    digits unless the path's last part ends in ``id``, strings shorter than 2 characters, yes/no words, free text."""
    if value is None or isinstance(value, bool):
        return True
    s = norm(value)
    if (isinstance(value, (int, float)) or NUMBER.fullmatch(s)) and sum(c.isdigit() for c in s) < 3 \
            and not path.rsplit(".", 1)[-1].lower().endswith("id"):
        return True
    return len(s) < 2 or s in _TRIVIAL_WORDS or is_free_text(s)
