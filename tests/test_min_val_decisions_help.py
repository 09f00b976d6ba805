"""The help of each option that keeps the store's lexical weight on too few validation decisions names the one limit
(sam_model.training.split_report.MIN_VAL_DECISIONS), not a copy of its value: a copy stays behind when it moves."""

import importlib

import sam_model.training.export_order as export_order
import sam_model.training.split_report as split_report
from sam_model.choose_order import build_parser


def test_choose_orders_lexical_help_names_the_limit(monkeypatch):
    monkeypatch.setattr(split_report, "MIN_VAL_DECISIONS", 37)
    assert "fewer than 37 decision points" in " ".join(build_parser().format_help().split())


def test_export_lexical_help_names_the_limit(monkeypatch):
    monkeypatch.setattr(split_report, "MIN_VAL_DECISIONS", 37)
    try:
        assert "fewer than 37 held-out decisions" in importlib.reload(export_order).LEXICAL_HELP
    finally:
        monkeypatch.undo()
        importlib.reload(export_order)
    assert f"fewer than {split_report.MIN_VAL_DECISIONS} held-out" in export_order.LEXICAL_HELP
