#!/usr/bin/env python3
"""Checks every relative link of the repository's Markdown files: the file or directory it names
must exist, and a `#fragment` must name a heading of the target file (as GitHub spells heading
anchors) or an explicit `<a id>`/`<a name>` anchor in it.

    python3 tests/docs/check_links.py [ROOT]

Walks ROOT (default: the repository holding this script) for `*.md` files, leaving out build
output and third-party trees (target/, vendor/, node_modules/, fuzz/target/, fuzz/corpus/,
fuzz/artifacts/, .git/). Links with a scheme (https:, mailto:) are not fetched. Links inside
fenced code blocks and inline code spans are not links. Prints each broken link as
`FILE:LINE: LINK: why`, and last `links: N passed, M failed`; exits 1 when any failed.
No dependencies beyond the Python 3 standard library.
"""

from __future__ import annotations

import os
import re
import sys
import unicodedata
from pathlib import Path
from urllib.parse import unquote

SKIP_DIRS = {".git", "target", "vendor", "node_modules"}
SKIP_PATHS = {Path("fuzz/target"), Path("fuzz/corpus"), Path("fuzz/artifacts")}

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
HTML_ANCHOR = re.compile(r"""<a\s+(?:[^>]*?\s)?(?:id|name)\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
# A code span may continue on the next line, but not past a blank line.
CODE_SPAN = re.compile(r"(`+)((?:(?!\n\s*\n).)+?)\1", re.DOTALL)
# [text](dest) or ![alt](dest), dest optionally in <>, optionally followed by a "title".
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFERENCE_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def markdown_files(root: Path) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root)
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and rel / d not in SKIP_PATHS)
        found.extend(Path(dirpath, name) for name in sorted(filenames) if name.endswith(".md"))
    return found


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, numbered from 1."""
    lines = []
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if fence is None and match:
            # A backtick fence's info string holds no backtick (CommonMark): "```` ```sh ````" at
            # the start of a line is inline code, not a fence.
            if match.group(1)[0] == "`" and "`" in line.strip()[len(match.group(1)):]:
                lines.append((number, line))
                continue
            fence = match.group(1)
        elif fence is not None:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) \
                    and not line.strip()[len(match.group(1)):].strip():
                fence = None
        else:
            lines.append((number, line))
    return lines


def rendered_text(heading: str) -> str:
    """A heading's text as GitHub renders it: code spans and emphasis marks gone, links as their
    text, inline HTML tags dropped."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = CODE_SPAN.sub(lambda m: m.group(2).strip(), text)
    text = re.sub(r"<[^>]+>", "", text)
    return text.replace("*", "")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, every character that is not a letter, mark,
    number, connector, space or hyphen removed, spaces turned into hyphens."""
    text = rendered_text(heading).strip().lower()
    text = "".join(c for c in text if c in " -" or c.isalnum() or unicodedata.category(c)[0] == "M"
                   or unicodedata.category(c) == "Pc")
    return text.replace(" ", "-")


def anchors(path: Path, cache: dict[Path, set[str]]) -> set[str]:
    if path not in cache:
        found: set[str] = set()
        counts: dict[str, int] = {}
        text = path.read_text(encoding="utf-8")
        for _, line in prose_lines(text):
            heading = HEADING.match(line)
            if heading:
                base = slug(heading.group(2))
                n = counts.get(base, 0)
                counts[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
            found.update(HTML_ANCHOR.findall(line))
        cache[path] = found
    return cache[path]


def links(text: str) -> list[tuple[int, str]]:
    """(line, destination) of every inline link, image and reference definition in prose. A
    link's text may run over several lines, so the prose is searched as a whole, with fenced
    blocks and code spans blanked out (line breaks kept, so that line numbers stay right)."""
    out = []
    prose = dict(prose_lines(text))
    lines = [prose.get(number, "") for number in range(1, text.count("\n") + 2)]
    for number, line in enumerate(lines, 1):
        definition = REFERENCE_DEF.match(line)
        if definition:
            out.append((number, definition.group(1)))
            lines[number - 1] = ""
    blanked = CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), "\n".join(lines))
    for match in INLINE_LINK.finditer(blanked):
        out.append((blanked.count("\n", 0, match.start()) + 1, match.group(1)))
    return sorted(out)


def check(root: Path) -> int:
    cache: dict[Path, set[str]] = {}
    passed = failed = 0
    for source in markdown_files(root):
        for number, dest in links(source.read_text(encoding="utf-8")):
            dest = dest[1:-1] if dest.startswith("<") and dest.endswith(">") else dest
            if not dest or SCHEME.match(dest):
                continue
            target, _, fragment = dest.partition("#")
            target_path = (source.parent / unquote(target)).resolve() if target else source.resolve()
            problem = None
            if target and not target_path.exists():
                problem = "no such file or directory"
            elif not target_path.is_relative_to(root.resolve()):
                problem = "points outside the repository"
            elif fragment:
                if target_path.is_dir() or target_path.suffix != ".md":
                    problem = "an anchor into a file that is not Markdown"
                elif unquote(fragment) not in anchors(target_path, cache):
                    problem = f"no heading or anchor #{fragment} in {target_path.relative_to(root.resolve())}"
            if problem:
                failed += 1
                print(f"{source.relative_to(root)}:{number}: {dest}: {problem}")
            else:
                passed += 1
    print(f"links: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]
    sys.exit(check(root.resolve()))
