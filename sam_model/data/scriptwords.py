"""The values a one-line script of node, Ruby or Perl names: ``node -e SCRIPT``, ``ruby -e``, ``perl -ne``.

A coding agent checks a value with a one-off script in the project's language (``node -e "console.log(require(
'./package.json').version)"``, ``ruby -e 'puts File.read("config/app.yml")'``): the script whole is said by no
earlier event, while the file or key it names was printed by an earlier listing or given by the issue. As
:mod:`sam_model.data.pywords` reads ``python -c``, the labelling rule traces the script's plain string literals, not
its code (the agent's own writing). Nothing is run, imported or parsed as the language: a small scanner reads the
quoted literals (``'...'`` and ``"..."``; node's ```...``` too) past the comments (node's ``//`` and ``/* */``, Ruby's
and Perl's ``#`` opening a word), and reads their escapes (``\\n`` a line break).

What is not read: a literal that interpolates (node's ```${x}```, Ruby's ``"#{x}"``, Perl's ``"$x"`` or ``"@a"``: what
it prints is composed, as an f-string's is in pywords), one of no letter or digit (``' | '``, ``'---'``), a codec or
file mode (``'utf8'``, ``'rb'``: :data:`SETTINGS`), a module of the language's own library that ``require`` or
``import`` names (``require('fs')``, ``require 'json'``, ``node:path``; a project's own, ``require('./lib/db')``, is
a value), Perl's ``q()``/``qq{}`` and Ruby's ``%q()``/``%w[]`` quoting, regex literals (``/ERROR/``; a quote
inside one makes the quotes pair wrongly) and heredocs. A script whose quotes do not close is read whole, as before.
"""

from __future__ import annotations

import re

# the programs whose flag runs its next word as a script: node -e/-p (-pe), --eval/--print; ruby and perl -e with
# the switches of no value clustered before it (-ne, -pe, -lne, -lane, -wle; Perl's -E too). -i (in-place, its
# suffix glued), -r/-M (a library) and -0 (a separator, its digits glued) end a cluster: perl -pi -e SCRIPT
LANGUAGES = {"node": "node", "nodejs": "node", "ruby": "ruby", "perl": "perl"}
_EVAL = {"node": re.compile(r"-p?e|-p|--eval|--print"), "ruby": re.compile(r"-[acdlnpsvwWy]*e"),
         "perl": re.compile(r"-[acdlnpstTuUvwWX]*[eE]")}
_QUOTES = {"node": "'\"`", "ruby": "'\"", "perl": "'\""}
# what makes a literal composed: node's template ${...}, Ruby's "#{...}", Perl's "$x", "${x}", "@a"
_INTERPOLATES = {"node": re.compile(r"\$\{"), "ruby": re.compile(r"#\{"), "perl": re.compile(r"[$@][{\w]")}
# codecs and file modes a script hands a call (readFileSync(p, 'utf8'), File.open(p, 'rb')): how it reads, no value
SETTINGS = frozenset({"utf8", "utf-8", "ascii", "latin1", "binary", "base64", "hex", "utf16le", "ucs2", "rb", "wb",
                      "ab", "r+", "w+", "a+", "rb+", "wb+"})
# modules of the language's own library: node's core modules, Ruby's standard library (a require of a path or a
# package of the project is a value)
STANDARD = {"node": frozenset({"fs", "path", "os", "child_process", "crypto", "util", "http", "https", "url", "zlib",
                               "stream", "events", "assert", "readline", "net", "buffer", "process", "querystring",
                               "fs/promises", "timers", "worker_threads", "dns", "tls", "vm"}),
            "ruby": frozenset({"json", "yaml", "psych", "set", "csv", "fileutils", "time", "date", "net/http", "open3",
                               "pp", "securerandom", "digest", "uri", "erb", "optparse", "pathname", "tempfile",
                               "open-uri", "logger", "benchmark", "base64", "socket", "English", "bigdecimal",
                               "stringio", "shellwords", "find", "zlib", "openssl"}),
            "perl": frozenset()}
_REQUIRE = re.compile(r"(?:\brequire\s*\(?|\bimport\s*\(?|\bfrom)\s*$")  # the code before a module's name
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}


def language(program: str | None) -> str | None:
    """The language a program word runs one-line scripts of (:data:`LANGUAGES`); None for any other program."""
    return LANGUAGES.get(program or "")


def is_eval_flag(lang: str, flag: str) -> bool:
    """Whether ``flag`` of a ``lang`` program (:func:`language`) runs the next word (or its ``=value``) as a
    script: node's ``-e``, ``-p``, ``-pe``, ``--eval``, ``--print``; Ruby's and Perl's ``-e`` alone or after their
    line-loop flags (``-ne``, ``-lane``; Perl's ``-E``)."""
    return bool(_EVAL[lang].fullmatch(flag))


def script_words(lang: str, script: str, limit: int) -> list[str] | None:
    """The traced words of a ``lang`` one-line script, in source order: its plain string literals (the module doc
    says which are left out); None where a quote or a ``/* */`` comment does not close, or the script is longer
    than ``limit`` characters (read whole, as before)."""
    if len(script) > limit:
        return None
    out: list[str] = []
    quotes, i, n = _QUOTES[lang], 0, len(script)
    while i < n:
        c = script[i]
        if lang == "node" and script.startswith("//", i) or lang != "node" and c == "#" and (
                i == 0 or script[i - 1].isspace() or script[i - 1] == ";"):
            end = script.find("\n", i)
            i = n if end < 0 else end
        elif lang == "node" and script.startswith("/*", i):
            end = script.find("*/", i + 2)
            if end < 0:
                return None
            i = end + 2
        elif c in quotes:
            end, text = _literal(script, i, c, raw=c == "'" and lang != "node")
            if end is None:
                return None
            text = text.strip()  # print "done\n": done
            body = script[i + 1:end - 1]
            module = _REQUIRE.search(script[max(0, i - 20):i]) is not None
            if not (c != "'" and _INTERPOLATES[lang].search(body) or not any(ch.isalnum() for ch in text)
                    or text.lower() in SETTINGS
                    or module and (text in STANDARD[lang] or lang == "node" and text.startswith("node:"))):
                out.append(text)
            i = end
        else:
            i += 1
    return out


def _literal(script: str, start: int, quote: str, raw: bool) -> tuple[int | None, str]:
    """The end of the literal opening at ``start`` with ``quote`` (past its closing quote) and its text, its escapes
    read (``raw``, Ruby's and Perl's single quotes: only ``\\'`` and ``\\\\``); None where it does not close."""
    i, text = start + 1, []
    while i < len(script):
        c = script[i]
        if c == "\\" and i + 1 < len(script):
            e = script[i + 1]
            text.append((e if e in "'\\" else "\\" + e) if raw else _ESCAPES.get(e, e))
            i += 2
            continue
        if c == quote:
            return i + 1, "".join(text)
        text.append(c)
        i += 1
    return None, ""
