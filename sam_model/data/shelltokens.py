"""A shell command line split into tokens as bash splits it: quotes, ``#`` comments, backslash-newlines,
heredocs, command substitutions and redirections' descriptor numbers.

:mod:`sam_model.data.shellwords` reads a line's words (which are values, which syntax); this is the step before it,
what bash itself does to the text before any word means anything: :func:`tokens` (shlex, with a comment read as bash
reads one, :func:`uncomment`), :func:`heredocs` (a heredoc's body taken out of the line, with the command it feeds),
:func:`substitutions` (``$(cmd)`` and backticks taken out as commands of their own) and :func:`descriptors` (the
``2`` of ``2>&1``). A token written quoted or escaped is a :class:`Quoted` word, which no operator's text makes
syntax (:func:`bare`). SWE-agent's reader splits its text commands by :func:`words`. :data:`MAX_WORDS` and
:data:`MAX_LINE_CHARS` bound what is split: shlex's time grows with the square of a word's length.
"""

from __future__ import annotations

import re
import shlex

OPERATOR = re.compile(r"[|&;<>()]+")  # a token of shell syntax, not a word
MAX_WORDS = 64  # words of one command line traced; a longer line (generated data, a pasted list) is read whole
# characters of one command line split (beside its heredocs' bodies); a longer one is read whole: shlex builds a word
# a character at a time, in time quadratic in its length (python -c '<1 MB>' took 18 s, under a served search's lock
# when it was the call searched with), and a line that long holds more than MAX_WORDS words or free-text words
MAX_LINE_CHARS = 10_000


class Quoted(str):
    """A token written quoted or escaped (``';'``, ``"|"``, ``\\;``, ``'done'``): a word whatever its text, as bash
    reads it. shlex removes the quotes, so its ``;`` read as an operator: ``grep -n '|' src/a.py`` was two commands,
    ``grep -n`` and ``src/a.py``, the file traced by nothing."""


_QUOTING = "\U000F0000"  # marks a quoted or escaped stretch for tokens (a private-use character no command line holds)


def bare(token: str) -> bool:
    """Whether ``token`` was written unquoted and unescaped: only such a token is shell syntax (an operator, a
    redirection, a reserved word)."""
    return not isinstance(token, Quoted)


def tokens(line: str, newlines: bool = False, escape: str = "\\") -> list[str] | None:
    """The shell tokens of ``line`` in order: its words (quotes removed) and operators (``|``, ``&&``, ``>``, ...),
    its ``#`` comments dropped; None when a quote does not close. A token any part of which was quoted or escaped is
    :class:`Quoted`. ``newlines``: a line break is an operator (it ends a command as ``;`` does) rather than a space.
    ``escape``: the escape character, PowerShell's a backtick (its backslash is a path's: ``C:\\repo\\src``, which
    bash's reading made ``C:reposrc``)."""
    text = uncomment(line, escape)
    marked = _QUOTING not in text
    lexer = shlex.shlex(_mark_quoting(text, escape) if marked else text, posix=True,
                        punctuation_chars="();<>|&\n" if newlines else True)
    lexer.escape = escape
    lexer.whitespace_split = True
    lexer.commenters = ""  # shlex takes any unquoted '#' for a comment: `grep -n a#b src` lost '#b' and 'src'
    if newlines:
        lexer.whitespace = " \t\r"
    try:
        found = list(lexer)
    except ValueError:  # a quote that does not close
        return None
    return [Quoted(t.replace(_QUOTING, "")) if marked and _QUOTING in t else t for t in found]


def _mark_quoting(text: str, escape: str) -> str:
    """``text`` with :data:`_QUOTING` inside each quote it opens and before each escaped character (a
    backslash-newline aside: it joins lines, no character of a word), so that shlex's tokens say which were quoted."""
    out, quote, i = [], "", 0
    while i < len(text):
        c = text[i]
        if c == escape and quote != "'":
            out.append(text[i:i + 2] if quote or text.startswith("\n", i + 1) else _QUOTING + text[i:i + 2])
            i += 2
            continue
        out.append(c)
        if c in "'\"" and quote in ("", c):
            quote = "" if quote else c
            if quote:
                out.append(_QUOTING)
        i += 1
    return "".join(out)


def words(line: str) -> list[str]:
    """A text command's words (SWE-agent's ``action``): its tokens without the operators, or its whitespace-split
    words when a quote does not close."""
    found = tokens(line)
    return [w for w in (line.split() if found is None else found) if not (bare(w) and OPERATOR.fullmatch(w))]


def uncomment(text: str, escape: str = "\\") -> str:
    """``text`` without its shell comments, as bash reads them: from a ``#`` that starts a word outside quotes to
    the end of its line (``a#b`` is a word, ``ls src  # list`` says ``ls src``)."""
    out, quote, i = [], "", 0
    while i < len(text):
        c = text[i]
        if not quote and c == "#" and (i == 0 or text[i - 1].isspace() or text[i - 1] in ";&|()<>"):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        if c == escape and quote != "'":  # an escaped character (a quote, a '#') is no quote or comment
            out.append(text[i:i + 2])
            i += 2
            continue
        if c in "'\"" and quote in ("", c):
            quote = "" if quote else c
        out.append(c)
        i += 1
    return "".join(out)


_HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"]?)([^\s'\"<>|&;()]+)\2")  # <<EOF, <<-'X'
_PIPE = re.compile(r"\s*\|(?![|&])\s*([^;&|\n]*)")  # | CMD after a heredoc, up to the next operator
_CATS = frozenset({"cat", "cat -"})


def _piped(command: str, after: str) -> str:
    """The command that reads a heredoc fed to ``command``: ``command`` itself, or where it is ``cat`` passing the
    body on (``cat <<EOF | python3``, ``cat <<'EOF' | bash``) the command ``after`` it pipes into, which reads it as
    ``python3 <<EOF`` would (:func:`~sam_model.data.shellwords._heredoc_reader`: a shell's or Python's script,
    anything else's data)."""
    m = _PIPE.match(after)
    return m.group(1) if m and " ".join(tokens(command) or ()) in _CATS else command


def heredocs(text: str) -> tuple[str, list[tuple[str, str]]]:
    """``text`` without its heredocs' bodies (``<<EOF`` ... ``EOF``, ``<<-'X'`` ... ``X``), and each body with the
    command it feeds (the text of its simple command before the ``<<``): what a heredoc feeds a command is no word of
    the command line (:func:`~sam_model.data.shellwords._heredoc_words` reads it). A ``<<`` inside quotes or a
    comment is none. A backslash-newline joins two lines, both characters removed as bash removes them (inside double
    quotes too: ``"abc\\<newline>def"`` is ``abcdef``, which had been ``abc def``), but inside single quotes, where it
    is the word's own text: sed's
    ``'3a\\<newline>TEXT'`` appends TEXT on its own line, and ``'a\\<newline>one\\<newline>two'`` two lines (the
    whole line's backslash-newlines had been joined first, so the text read ``one two``); a body's are joined where
    its delimiter is unquoted, as bash joins them, and kept where it is quoted (``<<'EOF'``, ``<<\\EOF``: fed as
    written)."""
    out: list[str] = []
    bodies: list[tuple[str, str]] = []
    # delimiters whose bodies start at the next line: each one's word, whether <<- (tabs), whether quoted, its command
    # and where in out the line after it goes on
    pending: list[tuple[str, bool, bool, str, int]] = []
    quote, i, start = "", 0, 0  # start: where the simple command read opens in out
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                out.append("" if text.startswith("\n", i + 1) else text[i:i + 2])
                i += 2
                continue
            quote = "" if c == quote else quote
        elif c == "\\":
            out.append("" if text.startswith("\n", i + 1) else text[i:i + 2])
            i += 2
            continue
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or text[i - 1].isspace() or text[i - 1] in ";&|()<>"):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            out.append(text[i:end])
            i = end
            continue
        elif text.startswith("<<", i) and not text.startswith("<<<", i) and (m := _HEREDOC.match(text, i)):
            command = "".join(out[start:]) if len(bodies) + len(pending) < MAX_WORDS else ""  # more: read whole
            word = m.group(3)  # <<\EOF quotes it as <<'EOF' does: its word is EOF
            pending.append((word.replace("\\", ""), m.group(1) == "-", bool(m.group(2)) or "\\" in word, command,
                            len(out)))
            i = m.end()
            continue
        elif c == "\n" and pending:
            out.append(c)
            i += 1
            for delimiter, tabs, quoted, command, at in pending:
                command = _piped(command, "".join(out[at:-1]))  # the line after it: cat <<EOF | python3
                lines: list[str] = []
                while i < len(text):
                    end = text.find("\n", i)
                    end = len(text) if end < 0 else end
                    line, i = text[i:end], end + 1
                    # a backslash-newline: joined, as bash joins an unquoted delimiter's body (a quoted one's is
                    # fed as written: a comment ending in a backslash ends at its line, the delimiter after it ends)
                    while not quoted and line.endswith("\\") and end < len(text):
                        end = text.find("\n", i)
                        end = len(text) if end < 0 else end
                        line, i = line[:-1] + text[i:end], end + 1
                    if (line.lstrip("\t") if tabs else line) == delimiter:
                        break
                    lines.append(line)
                bodies.append((command, "\n".join(lines)))
            pending, start = [], len(out)
            continue
        elif c in ";|&(\n":
            start = len(out) + 1
        out.append(c)
        i += 1
    return "".join(out), bodies


SUBSTITUTED = "\x00"  # stands for a command substitution's output in its word (never a character of a command line)


def substitutions(text: str) -> tuple[str, list[str]]:
    """``text`` with each command substitution outside single quotes (``$(cmd)``, ```cmd```, ``$((1 + 2))``) made
    :data:`SUBSTITUTED`, and the commands' scripts (an arithmetic expansion's none). The word holding one is what the
    command printed when it ran (``cat $(find . -name a.py)``, ``"$(pwd)/src"``), said by no earlier event as such, so
    it is no traced word; the command inside is a command, its words traced as any other's (it was split with the
    outer line: ``$``, ``find`` and ``x.py`` were words, the backticks glued to the words they touched). One that does
    not close is left as it is."""
    out: list[str] = []
    scripts: list[str] = []
    quote, i = "", 0
    while i < len(text):
        c = text[i]
        if c == "\\" and quote != "'":
            out.append(text[i:i + 2])
            i += 2
            continue
        if c == "'" and quote in ("", "'"):
            quote = "" if quote else "'"
        elif c == '"' and quote in ("", '"'):
            quote = "" if quote else '"'
        elif quote != "'" and (c == "`" or text.startswith("$(", i)):
            end = _closing(text, i)
            if end is not None:
                script = text[i + 1:end - 1] if c == "`" else text[i + 2:end - 1]
                if not (c == "$" and script.startswith("(") and script.endswith(")")):  # $((...)): arithmetic
                    scripts.append(script.replace("\\`", "`") if c == "`" else script)
                out.append(SUBSTITUTED)
                i = end
                continue
        out.append(c)
        i += 1
    return "".join(out), scripts


def _closing(text: str, start: int) -> int | None:
    """The index past the end of the substitution opening at ``start`` (a backtick, or ``$(``: its ``)``, parentheses
    and quotes inside counted); None when it does not close."""
    if text[start] == "`":
        i = start + 1
        while i < len(text):
            if text[i] == "\\":
                i += 2
                continue
            if text[i] == "`":
                return i + 1
            i += 1
        return None
    depth, quote, i = 0, "", start + 1
    while i < len(text):
        c = text[i]
        if c == "\\" and quote != "'":
            i += 2
            continue
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


_DESCRIPTOR = re.compile(r"[0-9]+(?=[<>])")  # the 2 of 2>&1, 2>/dev/null, 2>err.log


def descriptors(text: str, escape: str) -> str:
    """``text`` without the descriptor numbers that open redirections outside quotes (``2>&1``, ``2>/dev/null``,
    ``2>err.log`` read as ``>&1``, ``>/dev/null``, ``>err.log``): the tokens split ``2`` from ``>`` and left it a word,
    traced to the first earlier output that printed a 2. A number with a space before the ``>`` (``echo 2 > f``) is
    an argument, and stays."""
    out, quote, i = [], "", 0
    while i < len(text):
        c = text[i]
        if c == escape and quote != "'":
            out.append(text[i:i + 2])
            i += 2
            continue
        if c in "'\"" and quote in ("", c):
            quote = "" if quote else c
        elif not quote and (i == 0 or text[i - 1].isspace() or text[i - 1] in ";&|()") \
                and (m := _DESCRIPTOR.match(text, i)):
            i = m.end()
            continue
        out.append(c)
        i += 1
    return "".join(out)
