"""A model card told how to fill its evaluation with ``python evaluate.py``, which exists only in a checkout: a user
who installed the package and adapted the default model outside one (README, "Train on your own logs") got a command
that fails (a walkthrough). The card names the installed command, sam-eval, and the checkout's beside it."""

from __future__ import annotations

from sam_model.card import render
from sam_model.evaluation.run import build_parser


def test_an_unevaluated_card_names_the_installed_command():
    card = render({"dim": 8, "projection": "diag"}, {}, {"sources": [{"path": "chats.jsonl", "kind": "transcripts"}]})
    line = next(x for x in card.splitlines() if x.startswith("Not evaluated yet"))
    command = line.split("`")[1].split()
    assert command[0] == "sam-eval", line
    args = build_parser().parse_args(command[1:])  # every option it names is sam-eval's, in the card's order
    assert (args.retriever, args.data, args.out, args.card) == ("THIS_FOLDER", "LOG", "OUT", "THIS_FOLDER")
