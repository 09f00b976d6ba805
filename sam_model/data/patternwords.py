"""A search pattern read as the names it searches for (:func:`pattern_words`): a regex or code
(``\\bfoo\\b``, ``def foo``, ``class Foo(``) is its names, the searched language's keywords left out; a plain
pattern (``TODO``, ``not found``) is one value.

An agent searches for a name an earlier event gave (the issue's ``foo``), while no event says ``def foo`` or
``foo\\(`` whole. A grep or rg in a command line (:mod:`sam_model.data.shellwords`), a sed address or substitution
(:mod:`sam_model.data.sedwords`) and a search tool's ``pattern`` argument
(:func:`sam_model.data.toolarguments.search_pattern`) are all read by this one rule.
"""

from __future__ import annotations

import re

# a pattern that is code or a regex is split into its names: 'def foo' or 'class Foo(' is said by no earlier event
# as such (an issue says foo). These words open a definition or an import, so a pattern starting with one is code
# (a phrase such as 'not found' is a value, traced whole as before)...
DECLARATIONS = frozenset({"def", "class", "function", "fn", "func", "struct", "interface", "trait", "impl", "enum",
                          "type", "import", "from", "export", "const", "let", "var", "pub", "async", "module",
                          "package", "return", "raise", "throw", "new", "extends", "include", "define"})
# A declaration opens code as code writes it, in lower case and before a name: 'Module not found', 'Type mismatch'
# or 'class not found' is an error message, a phrase (split, it traced found or mismatch to any output saying it).
PROSE = frozenset({"not", "is", "are", "was", "were", "be", "been", "in", "and", "or", "an", "the", "to", "of", "on",
                   "at", "by", "for", "with", "if", "that"})
# ...and, with these, are the searched language's syntax, said by any file an agent viewed: dropped from a split
# pattern as a program word is from a command
KEYWORDS = DECLARATIONS | {"self", "this", "cls", "await", "static", "public", "private", "protected", "final",
                           "override", "virtual", "void", "mut", "as", "in", "is", "not", "and", "or", "if", "else",
                           "elif", "for", "while", "with", "yield", "lambda", "use", "using", "namespace", "impl"}
_REGEX = re.compile(r"[\\^$*+?()\[\]{}|]")  # a character that makes a pattern a regex (a literal's '.' does not)
# [A-Z], [^)]: a class of characters, no name; an escape first (\[server\], \\[: read as it is, so an escaped
# bracket is a literal's, \[server\] the name server: it was read as a class [server\], and the pattern traced nothing)
_BRACKET = re.compile(r"\\.|\[\^?\]?[^\]]*\]", re.DOTALL)
_CLASS = re.compile(r"\\[bBwWsSdDAZzG<>]|\.[*+?]")  # \b, \s, .*: regex syntax
_SYNTAX = re.compile(r"\\(.)|[\^$*+?()\[\]{}|]")  # an escape or an operator: where a regex's literal runs end
_NAME_CHAR = re.compile(r"[\w.@/ -]")  # an escaped character that is a literal's (\. \-), not an operator (\| \()
PIECE = re.compile(r"[\w.@/-]+")  # a name, a dotted name (os.path.join), a path


def pattern_words(word: str, plain: str, fixed: bool = False) -> list[str]:
    """The traced words of a search pattern (grep's, rg's, git grep's): a pattern that is a regex (``\\bfoo\\b``,
    ``foo\\(``, ``foo.*bar``) or code (it opens with a word of :data:`DECLARATIONS`, :func:`_is_code`: ``def foo``,
    ``class Foo(``, ``from a.b import c``) is its names, the names of :data:`KEYWORDS` left out (``foo``; ``Foo``; ``a.b``, ``c``):
    the agent searched for a name an earlier event gave (the issue's ``foo``), and the pattern whole, or its syntax,
    is no value any event said. Another pattern (``TODO``, ``not found``, ``user_42@example.com``) is ``plain``, the
    word as it was traced before, and a phrase between a regex's operators (``Connection refused\\|timed out``) is
    that phrase: split, its common words (``out``) were traced to any earlier event saying them. ``fixed``: the
    search takes the pattern as fixed strings (``grep -F``, ``fgrep``, ``rg -F``), every character of it literal, so
    its regex characters end no name: ``[database]`` is the name ``database`` (read as a regex, a class of
    characters that traced nothing), a phrase is ``plain`` whole (``a|b`` is no two runs), code its names."""
    if fixed and _REGEX.search(word):
        names = _names(word)
        return [plain] if len(names) > 1 and not _is_code(names) else [n for n in names if n.lower() not in KEYWORDS]
    if not _REGEX.search(word):
        names = _names(word)
        return [n for n in names if n.lower() not in KEYWORDS] if names and _is_code(names) else [plain]
    text = _SYNTAX.sub(lambda m: m.group(1) if m.group(1) and _NAME_CHAR.fullmatch(m.group(1)) else "|",
                       _CLASS.sub("|", _BRACKET.sub(_class, word)))
    out: list[str] = []
    for literal in text.split("|"):  # a regex's literal runs: 'Connection refused\|timed out' is two phrases
        names = _names(literal)
        if len(names) > 1 and not _is_code(names):  # a phrase, traced whole ('timed out': split, out was a value)
            found = list(PIECE.finditer(literal))
            out.append(" ".join(literal[found[0].start():found[-1].end()].split()).strip(".-/"))
        else:
            out += [n for n in names if n.lower() not in KEYWORDS]
    return out


def _class(m: re.Match[str]) -> str:
    """A :data:`_BRACKET` match as :func:`pattern_words` reads it: a class of characters ends a literal run, an escape
    (``\\[``, a literal bracket) is kept for the run's reading."""
    return m.group() if m.group().startswith("\\") else "|"


def _names(text: str) -> list[str]:
    """The names of a pattern's literal text (``os.path.join``, ``src/a.py``, ``foo``), in order."""
    return [n for n in (p.strip(".-/") for p in PIECE.findall(text)) if n]


def _is_code(names: list[str]) -> bool:
    """Whether a pattern of these names is code: it opens with a declaration as code writes it (lower case), not
    followed by a word of prose (:data:`PROSE`: ``class not found``, ``from the user``)."""
    return names[0] in DECLARATIONS and (len(names) == 1 or names[1].lower() not in PROSE)
