"""A sed script that edits or finds lines read as the values it names (:func:`sed_words`): ``sed -i
's/old_name/new_name/g'`` is ``old_name`` and ``new_name``, an address ``/def foo/`` the name ``foo``, ``120,130d``
its line numbers, an added line's text a value, ``w FILE`` a path.

A sed script whole is said by no earlier event while its parts are (the issue's ``old_name``), so the shell rule
(:mod:`sam_model.data.shellwords`) traces the parts; a Perl one-liner that is a sed edit (``perl -pi -e``) is read
here too. A script of line prints only is a line range (:mod:`sam_model.data.lineranges`).
"""

from __future__ import annotations

import re

from sam_model.data.lineranges import RANGE_LINE
from sam_model.data.patternwords import PIECE, pattern_words
from sam_model.data.shellpaths import listed_path

_SED_NUMBER = re.compile(rf"{RANGE_LINE}(?!\d)|\$")  # a sed address that is a line (or the last line)
_SED_S_FLAGS = re.compile(r"[gpiImMe0-9]*")  # s///'s flags (w FILE, the last, is read on its own)
_SED_REFERENCE = re.compile(r"\\[0-9&]|(?<!\\)&")  # a replacement's \1 or &: the matched text, no letters of it
_UNESCAPE = re.compile(r"\\(.)", re.DOTALL)


def sed_words(script: str) -> list[str] | None:
    """The traced words of a ``sed`` script that edits or finds lines by a regex (``s/old/new/g``, ``/DEBUG/d``,
    ``120,130d``, ``/def foo/,/def bar/p``, several joined by ``;`` or lines): a substitution's old part read as a
    grep's pattern (:func:`~sam_model.data.patternwords.pattern_words`: a regex or code its names, another pattern
    whole) and its new part as one (its ``\\1`` and ``&``, the matched text, split it), a ``/regex/`` address read
    so, a line address by its line numbers as a print's (:func:`~sam_model.data.lineranges.line_numbers`), an
    ``a``/``i``/``c`` command's text (``/^import os$/a import sys``, ``3a\\`` and its lines) read as a substitution's
    new part, and the file of ``w FILE``, ``r FILE`` or ``s///w FILE`` a path; None for a script of line prints only
    (:func:`~sam_model.data.lineranges.line_numbers` reads those) or one this does not parse (``y///``,
    braces), read whole as before. ``sed -i 's/old_name/new_name/g' FILE`` was traced by ``s/old_name/new_name/g``,
    which no event said, while the issue had said ``old_name``; an added line's text and a written file were one
    word with the script until CONVERSION_VERSION 53."""
    out: list[str] = []
    edits, i, n = False, 0, len(script)
    while i < n:
        if script[i] in " \t\n;":
            i += 1
            continue
        lines: list[str] = []
        addressed = False  # a regex address read (a line address is in lines)
        for bound in range(2):
            if m := _SED_NUMBER.match(script, i):
                lines.append(m.group())
                i = m.end()
            elif script[i:i + 1] == "/" or script[i:i + 1] == "\\" and i + 2 < n:
                delimiter = script[i + 1] if script[i] == "\\" else "/"
                end, regex = _sed_part(script, i + (2 if script[i] == "\\" else 1), delimiter)
                if end is None:
                    return None
                out += pattern_words(regex, regex) if regex else []
                edits, i, addressed = True, end, True  # /def foo/,/def bar/p: a grep's pattern
            elif bound:
                return None  # a ',' with no second address
            if bound or script[i:i + 1] != ",":
                break
            i += 1
        while i < n and script[i] in " \t!":
            i += 1
        command = script[i:i + 1]
        if command == "s" and i + 1 < n and script[i + 1] not in "\\\n ":
            delimiter = script[i + 1]
            end, old = _sed_part(script, i + 2, delimiter)
            end, new = _sed_part(script, end, delimiter) if end is not None else (None, "")
            if end is None:
                return None
            i = _SED_S_FLAGS.match(script, end).end()  # type: ignore[union-attr]
            file = ""
            if script[i:i + 1] == "w":  # s/a/b/w FILE: the file the changed lines are written to
                i, file = _sed_text(script, i + 1)
            out += pattern_words(old, old) if old else []
            for literal in _SED_REFERENCE.split(new):  # s/foo(\(.*\))/bar\1/: bar, not bar1
                found = list(PIECE.finditer(literal := _UNESCAPE.sub(r"\1", literal)))  # '\1 = 30': 30
                literal = literal[found[0].start():found[-1].end()] if found else ""
                out += pattern_words(literal, literal) if literal else []
            out += [listed_path(file)] if file else []
            edits = True
        elif command and command in "pdDPq=":
            edits = edits or command != "p"
            i += 1
        elif command and command in "aicwWrR" and (script[i + 1:i + 2] in (" ", "\t", "\\") or command in "aic"
                                                   and (lines or addressed) and i + 1 < n):  # a TEXT, w FILE
            # (a blank or backslash after the letter: app.py, a file the script edits, is no 'a' command; after an
            # address GNU sed takes the text right after it, 3aimport sys, as bash leaves "3a\<newline>import sys")
            i, text = _sed_text(script, i + 1)
            if command in "aic":  # the text added, read as a substitution's new part is
                found = list(PIECE.finditer(text))
                out += pattern_words(text, text[found[0].start():found[-1].end()]) if found else []
            elif text:
                out.append(listed_path(text))
            edits = True
        else:
            return None
        if len(lines) == 2 and lines[1] != "$":  # 120,130d: lines a view showed (no page: is_page is a print's)
            out += lines[:1] + lines[1:] * (int(lines[0]) > 1)
        elif lines and lines[0] != "$":
            out.append(lines[0])
        if i < n and script[i] not in " \t\n;}":
            return None
    return out if edits else None


def _sed_text(script: str, start: int) -> tuple[int, str]:
    """The end of a sed command's text or file name opening at ``start`` (``a TEXT``, ``a\\`` and its lines, each
    but the last ending in a backslash; ``w FILE``: the line break closing it) and the text, its leading blanks and the backslash GNU sed takes
    before it left out, its escapes read: it runs to the end of its line, a ``;`` included, as sed reads it."""
    i, n = start, len(script)
    while i < n and script[i] in " \t":
        i += 1
    if script.startswith("\\\n", i):  # a\ then the text on the next lines
        i += 2
    elif script[i:i + 1] == "\\":  # a\text (GNU sed's one-line form)
        i += 1
    lines: list[str] = []
    while True:
        end = script.find("\n", i)
        end = n if end < 0 else end
        line = script[i:end]
        if line.endswith("\\") and end < n:
            lines.append(line[:-1])
            i = end + 1
            continue
        lines.append(line)
        break
    return end, _UNESCAPE.sub(r"\1", "\n".join(lines)).strip()


def _sed_part(script: str, start: int, delimiter: str) -> tuple[int | None, str]:
    """The end of a sed regex or replacement opening at ``start`` (past its closing ``delimiter``) and its text, an
    escaped delimiter read as the character (``s|/usr/lib|/opt/lib|``, ``s/a\\/b/c/``); None where it does not
    close."""
    i, text = start, []
    while i < len(script):
        c = script[i]
        if c == "\\" and i + 1 < len(script):
            text.append(script[i + 1] if script[i + 1] == delimiter else script[i:i + 2])
            i += 2
            continue
        if c == delimiter:
            return i + 1, "".join(text)
        text.append(c)
        i += 1
    return None, ""
