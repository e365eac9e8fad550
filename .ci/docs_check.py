"""Read the built HTML documentation as a reader would see it and fail on what a
warning-free Sphinx build still lets through: images that are not there, API pages
without a signature or a description, docstrings inherited from Python's built-in
types, and reStructuredText markup left as literal text.

Usage: python .ci/docs_check.py BUILD_DIR
"""

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

# reStructuredText that did not become markup shows up in the text as written
RAW_MARKUP = re.compile(r"``\S|\S``|:(?:class|func|meth|mod|attr|data|math|doc|ref):`")
# the first line of the docstring of a built-in type, shown for an undocumented attribute
BUILTIN_DOCS = ("Build an immutable unordered collection", "str(object=", "int([x])",
                "dict() -> new empty dictionary", "Initialize self.")


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.images, self.text, self._skip, self._in_main = [], [], 0, 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "pre", "code"):
            self._skip += 1
        if tag == "main":
            self._in_main += 1
        if tag == "img":
            self.images.append(dict(attrs).get("src") or "")

    def handle_endtag(self, tag):
        if tag in ("script", "style", "pre", "code"):
            self._skip -= 1
        if tag == "main":
            self._in_main -= 1

    def handle_data(self, data):
        if self._in_main and not self._skip:
            self.text.append(data)


def check(root):
    problems = []
    for path in sorted(root.rglob("*.html")):
        rel = path.relative_to(root)
        if rel.parts[0] in ("_static", "_sources", "_modules"):
            continue
        html = path.read_text(encoding="utf-8")
        page = _Page()
        page.feed(html)
        text = " ".join(page.text)
        for src in page.images:
            if src and not src.startswith(("http:", "https:", "data:")):
                if not (path.parent / src.split("#")[0]).is_file():
                    problems.append(f"{rel}: image {src} is missing")
        match = RAW_MARKUP.search(text)
        if match:
            snippet = text[max(0, match.start() - 40):match.end() + 40].replace("\n", " ")
            problems.append(f"{rel}: markup shown as text: ...{snippet}...")
        for doc in BUILTIN_DOCS:
            if doc in text:
                problems.append(f"{rel}: shows the built-in docstring {doc!r}")
        if rel.parts[0] == "generated":
            if 'class="sig sig-object py"' not in html:
                problems.append(f"{rel}: no signature")
            body = re.search(r"<dd>(.*?)</dd>", html, re.S)
            if body is None or not re.sub(r"<[^>]+>", "", body.group(1)).strip():
                problems.append(f"{rel}: no description")
    return problems


def main(argv):
    root = Path(argv[1])
    pages = list(root.rglob("*.html"))
    if not pages:
        sys.exit(f"no HTML pages under {root}")
    problems = check(root)
    for line in problems:
        print(line, file=sys.stderr)
    print(f"docs check: {len(pages)} pages, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
