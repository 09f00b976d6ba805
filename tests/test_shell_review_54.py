"""A non-author review of the shell rules added after review 54 (sed edits, docker run, ssh, paging windows, Python
scripts and heredocs): what a transcript may hold that stopped or slowed the conversion, and Python literals that
were traced though they are the script's settings or syntax."""

from __future__ import annotations

import ast
import json
import warnings
from types import SimpleNamespace

import pytest

from sam_model.data import pywords, shellwords
from sam_model.data.chatmessages import ToolCall
from sam_model.data.pywords import python_words
from sam_model.data.shelltokens import MAX_WORDS
from sam_model.data.shellwords import command_words
from sam_model.data.toolstate import TranscriptState

HUGE = "9" * 4400  # past int()'s 4,300 digits


@pytest.mark.parametrize("command, script", [
    (f"sed -n '{HUGE},{HUGE}9p' a.py", f"{HUGE},{HUGE}9p"),
    (f"sed -i '{HUGE},{HUGE}9d' a.py", f"{HUGE},{HUGE}9d"),
    (f"sed -i '{HUGE}s/a_b/c_d/g' a.py", f"{HUGE}s/a_b/c_d/g"),
    (f"awk 'NR>={HUGE} && NR<={HUGE}9' a.py", f"NR>={HUGE} && NR<={HUGE}9"),
    (f"git blame -L {HUGE},{HUGE}9 a.py", f"{HUGE},{HUGE}9"),
])
def test_a_line_number_of_thousands_of_digits_is_read_whole(command, script):
    """A number no file has as a line stopped the conversion with int()'s ValueError (sed -n 'N,Mp', a deletion's
    lines, git blame -L): the script is now one word, as any script that is no line range."""
    assert command_words(command) == [script, "a.py"]


def test_a_line_of_many_heredocs_is_read_whole_without_reading_each(monkeypatch):
    """Each heredoc's command was joined and split again (its reader), in time quadratic in their number (4,000 on
    one line: 5 s); past MAX_WORDS of them the line is read whole, as a line of that many words is."""
    calls = []
    reader = shellwords._heredoc_reader
    monkeypatch.setattr(shellwords, "_heredoc_reader", lambda command: calls.append(command) or reader(command))
    line = "cat " + "<<A " * 1000 + "\n" + "x\nA\n" * 1000
    assert command_words(line) is None
    assert len(calls) <= MAX_WORDS
    assert command_words("cat <<A <<B\nx_1\nA\ny_2\nB") == ["x_1", "y_2"]  # a few: each body, as before


def test_a_script_is_parsed_without_a_warning():
    """ast.parse warns of an invalid escape ('\\d': a DeprecationWarning, shown by Python 3.12 as a SyntaxWarning on
    every conversion of such a call): the agent's script is no code of ours, so its warnings are not shown."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert python_words(r"import re; print(re.findall('\d+', open('log/app.log').read()))", 10_000) == [
            r"\d+", "log/app.log"]
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize("script", [
    "x = " + "-" * 600 + "1",
    "x = " + "1 + " * 600 + "1",
    "x = a" + ".b" * 600,
    "x = " + "not " * 600 + "y",
    "if a: pass\n" + "elif a: pass\n" * 600,
    "x = (" + "1 +\n" * 600 + "1)",  # over lines inside brackets: one statement
])
def test_a_script_nested_past_the_bound_is_not_parsed(script, monkeypatch):
    """ast.parse recurses in C a level for each operator of a chain: CPython 3.11 refuses thousands as a
    RecursionError on the main thread, a smaller thread's stack (a served add) or another version need not. A
    statement of more than MAX_NESTING operators is read whole, unparsed."""
    parsed: list[str] = []
    monkeypatch.setattr(pywords, "ast", SimpleNamespace(**{**vars(ast), "parse": parsed.append}))
    assert python_words(script, 10_000) is None
    assert parsed == []


def test_a_long_realistic_script_is_still_parsed():
    script = "\n".join(f"print(d['key_{i}'].get('x', 0) + len(rows[{i}]) * 2)" for i in range(150))
    assert python_words("import json\nd = json.load(open('a.json'))\n" + script, 10_000)[:3] == [
        "a.json", "key_0", "x"]


@pytest.mark.parametrize("script, expected", [
    ("print(open('a.json').read().encode('utf-8'))", ["a.json"]),
    ("print(b.decode('latin-1'), Path('notes.md').read_text('utf-8'))", ["notes.md"]),
    ("print(now.strftime('%Y-%m-%d'), datetime.strptime('2024-05-01', '%Y-%m-%d'))", ["2024-05-01"]),
    ("print('---'); print(' | '.join(['db_host', 'port'])); print('==>', '')", ["db_host", "port"]),
    ("print('{}: {}'.format('db_host', 1), '%s=%d' % ('port', 2))", ["db_host", "port"]),
])
def test_a_script_s_settings_and_separators_are_no_words(script, expected):
    """A codec, a time format, a template and a literal of no letter or digit are how the script prints, no value an
    earlier event gave: '---' was traced to any diff's '--- a/x.py', 'utf-8' to the first script that said it."""
    assert python_words(script, 10_000) == expected


def test_a_codec_is_not_traced_to_the_script_before():
    """The script before said encoding='utf-8' (a setting, untraced); .encode('utf-8') traced utf-8 to it."""
    st = TranscriptState()
    st.add({"role": "user", "content": "Check config/settings.json."})
    st.add({"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "Bash", "arguments": '{"command": "python3 -c \\"import json; print(json.load(open('
                                     "'config/settings.json', encoding='utf-8')))\\\"\"}"}}]})
    st.add({"role": "tool", "tool_call_id": "c1", "content": "{'port': 5432}"})
    st.add({"role": "assistant", "content": "Again."})
    d = st.decide([ToolCall("Bash", {"command": "python3 -c \"print(open('config/settings.json').read()"
                                                ".encode('utf-8'))\""}, "c2")])
    assert d.needed == {"command": ["config/settings.json"]} and d.labels == [0]


def test_a_window_from_a_grep_hit_on_a_page_bound_is_labelled_by_its_file():
    """sed -n '200,250p' after a grep hit at line 200 is a page by its arithmetic, which no rule of one command can
    tell from paging on; the labelling rule sees the earlier results, and a window opening at a hit is no page
    (stop 56): 200 is a word, traced to the grep that printed the hit, not to the first event printing 200 (the
    user's 'HTTP 200' here). 250 no event said."""
    st = TranscriptState()
    st.add({"role": "user", "content": "Checkout answers HTTP 200 with an empty body; find where the total is set."})
    for i, (command, output) in enumerate([("grep -rn 'def set_total' src/", "src/shop/cart.py:200:def set_total(self):"),
                                           ("git log --oneline -3", "a1b2c3d Fix rounding")]):
        st.add({"role": "assistant", "content": "", "tool_calls": [{"id": f"c{i}", "type": "function", "function": {
            "name": "Bash", "arguments": json.dumps({"command": command})}}]})
        st.add({"role": "tool", "tool_call_id": f"c{i}", "content": output})
    st.add({"role": "assistant", "content": "Reading it."})
    d = st.decide([ToolCall("Bash", {"command": "sed -n '200,250p' src/shop/cart.py"}, "c9")])
    assert d.needed == {"command": ["200", "src/shop/cart.py"]} and d.labels == [2]
