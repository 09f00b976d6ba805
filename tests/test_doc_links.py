"""Every relative link and #anchor of README.md and docs/*.md (tests/docset.py) points at a file that exists and,
for an anchor, at a heading (or an ``<a id>``) of that file: the README's detail was moved into docs/ and its
links re-pointed, so a link that a later edit or a re-run of the split breaks shows here, not to a reader."""

from __future__ import annotations

import re
from pathlib import Path

import docset

FENCE = re.compile(r"^( *)```.*?^\1```", re.S | re.M)
CODE = re.compile(r"`[^`\n]+`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6} +(.+?) *#*$", re.M)
HTML_ID = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def slug(title: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but - and _ dropped, each space a -."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors a Markdown file offers: its headings' (a repeated one gets -1, -2, ...) and its <a id>s."""
    seen: dict[str, int] = {}
    out = set(HTML_ID.findall(text))
    for title in HEADING.findall(FENCE.sub("", text)):
        base = slug(re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title))
        n = seen.get(base, 0)
        out.add(base if n == 0 else f"{base}-{n}")
        seen[base] = n + 1
    return out


def links(text: str) -> list[tuple[int, str]]:
    """(line, target) of every Markdown link and image outside code (fenced blocks and inline spans)."""
    prose = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    prose = CODE.sub(lambda m: " " * len(m.group(0)), prose)
    return [(prose.count("\n", 0, m.start()) + 1, m.group(1)) for m in LINK.finditer(prose)]


def broken(source: Path, text: str) -> list[str]:
    """The links of ``text`` (the file ``source``) that lead nowhere, each as FILE:LINE: target (why)."""
    out = []
    for line, target in links(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: are not checked here
            continue
        path, _, anchor = target.partition("#")
        dest = (source.parent / path).resolve() if path else source
        where = f"{source.relative_to(docset.REPO).as_posix() if source.is_relative_to(docset.REPO) else source}:{line}"
        if not dest.exists():
            out.append(f"{where}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text(encoding="utf-8")):
            out.append(f"{where}: {target} (no heading of {dest.name} has that anchor)")
    return out


def test_every_relative_link_and_anchor_of_the_docs_resolves():
    files = docset.files()
    assert len(files) > 10, "docs/*.md were not found"
    found = [(p, t) for p in files for t in links(p.read_text(encoding="utf-8"))]
    assert len(found) > 40, "the README's links to its docs were not found"
    bad = [b for p in files for b in broken(p, p.read_text(encoding="utf-8"))]
    assert not bad, "\n".join(bad)


def test_the_checker_finds_a_missing_file_a_missing_anchor_and_passes_good_ones(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\n## Train on your own logs\n\n## Train on your own logs\n")
    (tmp_path / "pic.png").write_bytes(b"")
    readme = tmp_path / "README.md"
    readme.write_text("See [a](docs/a.md#train-on-your-own-logs), [again](docs/a.md#train-on-your-own-logs-1),\n"
                      "![p](pic.png), [here](#see) and [web](https://example.com).\n\n## See\n\n"
                      "[gone](docs/b.md), [no anchor](docs/a.md#evaluate), [self](#nowhere),\n"
                      "`[code](docs/c.md)` and\n```\n[fenced](docs/d.md)\n```\n")
    got = broken(readme, readme.read_text())
    assert [g.split(": ", 1)[1] for g in got] == [
        "docs/b.md (no such file)", "docs/a.md#evaluate (no heading of a.md has that anchor)",
        "#nowhere (no heading of README.md has that anchor)"]
    assert all(g.endswith(")") and ":6: " in g for g in got)


POINTER = re.compile(r"(README|docs/[\w/.-]+\.md),?\s+((?:\"[^\"]+\"(?:,\s*)?)+)")
FIGURES = re.compile(r"(README|docs/[\w/.-]+\.md)'s ([\w-]+) figures")
TITLE = re.compile(r"\"([^\"]+)\"")


def pointers(config_text: str) -> list[tuple[str, str]]:
    """(file, section title) of every ``FILE "Title"`` or ``FILE "Title", "Title"`` pointer in a config's comments,
    a title wrapped across lines read whole, and of every ``FILE's NAME figures`` (NAME then the title)."""
    comments = " ".join(line.split("#", 1)[1].strip() for line in config_text.splitlines() if "#" in line)
    found = [(f, title) for f, titles in POINTER.findall(comments) for title in TITLE.findall(titles)]
    found += FIGURES.findall(comments)
    return [("README.md" if f == "README" else f, title) for f, title in found]


def holds_section(text: str, title: str) -> bool:
    """Whether ``text`` has a section of that title: a heading, or a paragraph led by it in bold (the benchmark
    files' sections); a name of figures, anywhere. A mention (a link's text, a sentence) is no section."""
    if re.fullmatch(r"[\w-]+", title) and " " not in title and title[:1].islower():
        return title in text
    return bool(re.search(rf"^#{{1,6}} +{re.escape(title)}|\*\*{re.escape(title)}", text, re.M))


def test_every_configs_pointers_name_a_file_that_holds_the_section():
    """adapt.yaml sent its reader to README "Mixed back: adapting without forgetting" after the README's detail moved
    into docs/: no such section there; so did twelve other configs ("Used ordering chosen on validation", "Taught to
    read 40 tokens", "The default model with more SGD" ...). Each pointer names the file that holds the section."""
    root = Path(docset.__file__).resolve().parents[1]
    bad = []
    for config in sorted((root / "configs").glob("*.yaml")):
        for file, title in pointers(config.read_text()):
            if not holds_section((root / file).read_text(), title):
                bad.append(f"configs/{config.name}: {file} has no section {title!r}")
    assert not bad, "\n".join(bad)
    assert pointers((root / "configs" / "adapt.yaml").read_text())
    assert pointers('# x (README\n# "A b") and docs/x.md "C", "D"; README\'s x-y figures') == [
        ("README.md", "A b"), ("docs/x.md", "C"), ("docs/x.md", "D"), ("README.md", "x-y")]
    assert holds_section("## A b: more\n", "A b") and holds_section("x **A b** (2026)", "A b")
    assert not holds_section("see [A b](docs/a.md)", "A b")
