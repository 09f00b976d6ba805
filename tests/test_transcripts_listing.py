"""The import report's notes name the first few of a list and count the rest in one way (transcripts.first_listed):
each note wrote its own "first 20, and N more" before, six copies of one idea. The notes read as they did, byte for
byte, at each note's limit and one and two past it."""

from __future__ import annotations

from collections import Counter

from sam_model.data.transcripts import ImportReport, first_listed


def test_first_listed_names_the_first_and_counts_the_rest():
    names = [f"f{i}" for i in range(23)]
    assert first_listed(names[:20]) == ", ".join(names[:20])
    assert first_listed(names[:21]) == ", ".join(names[:20]) + " and 1 more"
    assert first_listed(names, 2, "files") == "f0, f1 and 21 more files"
    assert first_listed(names[:3], 2, show=str.upper, sep="; ", last="; and") == "F0; F1; and 1 more"
    assert first_listed([], 5) == ""


def test_the_notes_at_their_limits_read_as_before():
    report = ImportReport()
    report.stderr_lines = {f"e{i}.out:2": 2 if i == 19 else 1 for i in range(21)}
    assert report.stderr_note().endswith("e18.out:2, e19.out:2 (and 1 more in the file) and 1 more files")
    report.stderr_lines = {f"e{i}.out:2": 1 for i in range(20)}
    assert report.stderr_note().endswith(": " + ", ".join(f"e{i}.out:2" for i in range(20)))
    report.abandoned = {f"a{i}.jsonl:5": 3 for i in range(22)}
    assert report.abandoned_note().endswith("a19.jsonl:5 (and 2 more in the file) and 2 more conversations")
    report.misplaced = {f"m{i}.jsonl:7": 1 for i in range(21)}
    assert report.misplaced_note().endswith("m19.jsonl:7 and 1 more files")
    report.passed = [f"p{i}.db" for i in range(21)]
    assert report.passed_note().endswith("p19.db and 1 more")
    report.cut_lines = [f"s{i}.jsonl:9" for i in range(20)]
    assert report.cut_note().endswith("s18.jsonl:9, s19.jsonl:9")
    for n, tail in ((6, "tool.a5 25"), (7, "tool.a5 25 and 1 more argument"), (8, "tool.a5 25 and 2 more arguments")):
        report.untraceable = Counter({f"tool.a{i}": 30 - i for i in range(n)})
        assert report.untraceable_note().endswith(tail), n
    report.other_roles = Counter({f"role{i}": 20 - i for i in range(11)})
    report.other_role_at = {f"role{i}": f"r.jsonl:{i}" for i in range(11)}
    assert report.roles_note().endswith("'role9' in 11 messages, first at r.jsonl:9; and 1 more roles")
    report.copies = [(f"c{i}.jsonl:1", f"o{i}.jsonl:1") for i in range(7)]
    assert report.repeats_note().endswith("c4.jsonl:1 (of o4.jsonl:1) and 2 more")


def test_the_skipped_list_reads_as_before_one_line_each():
    """The skipped conversations, one a line, the first 20 and a count of the rest (the last copy written out)."""
    report = ImportReport()
    for n in (20, 21, 22):
        report.skipped = [f"k{i}.jsonl:1: bad" for i in range(n)]
        lines = report.lines()
        at = lines.index(f"skipped {n} bad conversations:")
        more = [f"  ... and {n - 20} more"] if n > 20 else []
        assert lines[at + 1:] == [f"  k{i}.jsonl:1: bad" for i in range(20)] + more, n
