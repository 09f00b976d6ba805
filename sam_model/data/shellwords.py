"""Shell command lines read as bash reads their words: the splitting of the SWE-agent reader's text commands, kept
apart from the reader so that other code can read a command line the same way.
"""

from __future__ import annotations

import re
import shlex

OPERATOR = re.compile(r"[|&;<>()]+")  # a token of shell syntax, not a word


def tokens(line: str, newlines: bool = False) -> list[str] | None:
    """The shell tokens of ``line`` in order: its words (quotes removed) and operators (``|``, ``&&``, ``>``, ...),
    its ``#`` comments dropped; None when a quote does not close. ``newlines``: a line break is an operator (it ends
    a command as ``;`` does) rather than a space."""
    lexer = shlex.shlex(uncomment(line), posix=True, punctuation_chars="();<>|&\n" if newlines else True)
    lexer.whitespace_split = True
    lexer.commenters = ""  # shlex takes any unquoted '#' for a comment: `grep -n a#b src` lost '#b' and 'src'
    if newlines:
        lexer.whitespace = " \t\r"
    try:
        return list(lexer)
    except ValueError:  # a quote that does not close
        return None


def words(line: str) -> list[str]:
    """A text command's words (SWE-agent's ``action``): its tokens without the operators, or its whitespace-split
    words when a quote does not close."""
    found = tokens(line)
    return [w for w in (line.split() if found is None else found) if not OPERATOR.fullmatch(w)]


def uncomment(text: str) -> str:
    """``text`` without its shell comments, as bash reads them: from a ``#`` that starts a word outside quotes to
    the end of its line (``a#b`` is a word, ``ls src  # list`` says ``ls src``)."""
    out, quote, i = [], "", 0
    while i < len(text):
        c = text[i]
        if not quote and c == "#" and (i == 0 or text[i - 1].isspace() or text[i - 1] in ";&|()<>"):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        if c == "\\" and quote != "'":  # an escaped character (a quote, a '#') is no quote or comment
            out.append(text[i:i + 2])
            i += 2
            continue
        if c in "'\"" and quote in ("", c):
            quote = "" if quote else c
        out.append(c)
        i += 1
    return "".join(out)
