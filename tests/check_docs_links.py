#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Check that every relative link of README.md and docs/**/*.md resolves.

Usage: /usr/bin/python3 tests/check_docs_links.py [REPOSITORY_ROOT]

For each Markdown link or image `[text](target)` outside code (fenced blocks and `inline code`)
whose target is not a URL (http:, https:, mailto:), the target file must exist relative to the
linking file, and a `#fragment` must name a heading of the target Markdown file (or of the same
file for a bare `#fragment`), slugged as GitHub does: lower case, every character that is not a
letter, digit, space, hyphen or underscore removed, spaces turned into hyphens, and `-1`, `-2`, ...
appended to repeated headings. Explicit `<a id="...">` / `<a name="...">` anchors count too.

Pages that other work is still writing are listed in PENDING: a link to one of them is accepted
(with a note) while the file does not exist, and checked like any other once it does.

Exit status 0 when every link resolves, 1 otherwise, with one line per broken link:
`FILE:LINE: broken link 'TARGET': REASON`. Run by ctest as `docs_links`.
"""
import os
import re
import sys

# Pages linked before they exist; remove an entry once its page is committed.
PENDING = set()  # e.g. {"docs/new-page.md"}

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
ANCHOR = re.compile(r"<a\s+(?:id|name)\s*=\s*\"([^\"]+)\"", re.IGNORECASE)
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")


def slug(text):
    """GitHub's anchor of a heading text."""
    text = INLINE_CODE.sub(lambda m: m.group(0).strip("`"), text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading: its text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def prose_lines(path):
    """(line number, raw text, text with inline code blanked) of the lines outside fenced code."""
    fence = None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            stripped = line.lstrip()
            marker = re.match(r"(```+|~~~+)", stripped)
            if marker:
                if fence is None:
                    fence = marker.group(1)[0] * 3
                elif stripped.startswith(fence):
                    fence = None
                continue
            if fence is None:
                raw = line.rstrip("\n")
                yield number, raw, INLINE_CODE.sub(lambda m: " " * len(m.group(0)), raw)


def anchors(path, cache={}):
    if path not in cache:
        seen, found = {}, set()
        for _, line, _ in prose_lines(path):
            heading = HEADING.match(line)
            if heading:
                base = slug(heading.group(2))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
            found.update(ANCHOR.findall(line))
        cache[path] = found
    return cache[path]


def markdown_files(root):
    files = [os.path.join(root, "README.md")]
    for folder, _, names in os.walk(os.path.join(root, "docs")):
        files += [os.path.join(folder, n) for n in names if n.endswith(".md")]
    return sorted(f for f in files if os.path.isfile(f))


def check(root):
    """The broken links as messages, and the number of links checked."""
    broken, checked = [], 0
    for path in markdown_files(root):
        rel_path = os.path.relpath(path, root)
        for number, _, line in prose_lines(path):
            for match in LINK.finditer(line):
                target = match.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
                    continue  # http:, https:, mailto:
                checked += 1
                file_part, _, fragment = target.partition("#")
                where = f"{rel_path}:{number}: broken link '{target}'"
                resolved = path if not file_part else os.path.normpath(
                    os.path.join(os.path.dirname(path), file_part))
                rel_resolved = os.path.relpath(resolved, root)
                if not os.path.exists(resolved):
                    if rel_resolved in PENDING:
                        print(f"note: {rel_path}:{number}: '{target}' is pending (not written yet)")
                        continue
                    broken.append(f"{where}: no file {rel_resolved}")
                    continue
                if fragment and resolved.endswith(".md"):
                    if fragment not in anchors(resolved):
                        broken.append(f"{where}: no heading with anchor #{fragment} in "
                                      f"{rel_resolved}")
    return broken, checked


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    broken, checked = check(root)
    for message in broken:
        print(message)
    print(f"{checked} relative links in README.md and docs/, {len(broken)} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
