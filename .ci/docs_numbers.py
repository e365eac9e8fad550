"""Every measured number in the prose of README.md and docs/ has a source in
studies/results/.

A *claim* is a number followed by ×, %, s or "times" (a ratio, a share, a time), or a
decimal with two or more places (0.504, 1.049: a score or a ratio), in prose: code
blocks, inline code, math, tables and directive bodies are left out, and so are
changelog and reference pages. Each claim must appear in a *cited* study file: one
named (``studies/results/<file>``, a folder of it, or the study script
``studies/<name>.py``, whose results are ``studies/results/<name>*``) in the same
paragraph or, failing that, in the same section (between two headings). A number
matches a study's number when they are the same value (0.50 matches 0.5 and 0.500, not 0.504: write the study's digits); a
whole-number ratio (32×, 6 times) must be written as a ratio there (32×), since small
whole numbers fill every table; a range 1.0–1.1× needs both ends. Numbers that no study measures — defaults, limits, formulas, examples — are
listed in ALLOWED with the reason.

Usage: python .ci/docs_numbers.py [ROOT]   (prints the unsourced claims; exit 1 if any)
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

#: pages left out: history and bibliography (no measurements of the library), and the
#: reproductions page, which studies/report.py writes from the raw study records (a
#: study result itself)
SKIPPED_PAGES = ("docs/changelog.md", "docs/references.md", "docs/reproductions.md")
#: folders a documentation build writes into docs/ (not sources)
BUILT = {"_build", "auto_examples", "generated", "_generated"}
#: the study results, as text (the raw records are compressed and not read)
RESULT_SUFFIXES = (".md", ".json", ".jsonl", ".txt")

#: (page, claim as written) → why it needs no study; page "*" for every page
ALLOWED: dict[tuple[str, str], str] = {
    ("*", "3.10"): "a Python version (the oldest supported), not a measurement",
    ("*", "3.13"): "a Python version (the newest wheel), not a measurement",
    ("*", "8×"): "the thread cap is a limit of the code (8 per core), not a measurement",
    ("*", "0.001"): "α = 0.001·n is a protocol constant of the selection study",
    ("*", "0.005"): "α = 0.005·n is paper 002's protocol constant",
    ("*", "0.01"): "σ = 0.01·std(y) is the paper's default, a parameter",
    ("*", "0.1 %"): "the search's stopping tolerance, a parameter of the code",
    ("*", "0.001 per"): "the evidence search's stopping tolerance, a parameter",
    ("*", "1 %"): "a stopping tolerance or margin written in the code",
    ("*", "5 %"): "the nested_5pc candidate's margin, a rule's definition",
    ("*", "50 %"): "a share in a definition, not a measurement",
    ("*", "10 s"): "the progress line's period, a constant of the code",
    ("docs/user_guide/output.rst", "42 s"): "an example progress line, not a measurement",
    ("docs/user_guide/output.rst", "63 s"): "an example progress line, not a measurement",
    ("docs/architecture.md", "3×"): "a ratio of flop counts from the formulas, not a "
                                    "measurement",
    ("docs/streaming.md", "4 ×"): "4 × the largest level: a threshold of the code",
    ("*", "2 s"): "the progress bar's delay, a constant of the code",
    ("*", "60 s"): "the quiet progress period, a constant of the code",
}

#: × followed by a number is a product or a shape (1000 × 1000), not a ratio
_UNIT = r"(?:\s?(?:×(?!\s?\d)|%|times\b|s\b)|x\b)"
_NUM = r"[+−-]?\d+(?:\.\d+)?"
_CLAIM = re.compile(
    rf"(?<![\w.·^/⁰¹²³⁴⁵⁶⁷⁸⁹⁻])({_NUM})(?:\s?[–-]\s?({_NUM}))?({_UNIT})"
    rf"|(?<![\w.·^/⁰¹²³⁴⁵⁶⁷⁸⁹⁻])([+−-]?\d+\.\d{{2,}})(?![\w·⁰¹²³⁴⁵⁶⁷⁸⁹]|\.\d)"
)
_STUDY_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_CITATION = re.compile(r"studies/(?:results/)?[\w./-]*[\w/]")
_HEADING_MD = re.compile(r"^#{1,6}\s")
_HEADING_RST = re.compile(r"^([=\-~^\"'`#*+])\1{2,}\s*$")
_NON_PROSE_DIRECTIVES = ("code-block", "code", "math", "list-table", "csv-table", "table",
                         "literalinclude", "image", "figure", "plot", "autosummary",
                         "automodule", "autoclass", "autofunction", "include", "toctree",
                         "doctest", "testcode", "highlight")


@dataclass
class Claim:
    page: str
    line: int
    text: str            # as written, e.g. "1.0–1.1×"
    values: list[str]    # the numbers to find, e.g. ["1.0", "1.1"]
    sources: list[str]   # the study files cited around it


def _strip_inline(text: str) -> str:
    """Prose without inline code, math, roles and link targets."""
    text = re.sub(r"``.*?``|`[^`]*`", " ", text)          # rst/markdown inline code, roles
    text = re.sub(r":math:\S*", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)               # markdown link targets
    return text


def _blocks(page: str, text: str) -> list[tuple[int, str, str]]:
    """(first line, paragraph text, section key) of every prose paragraph."""
    lines = text.splitlines()
    out: list[tuple[int, str, str]] = []
    rst = page.endswith((".rst", ".inc"))
    section, fence, directive_indent = "top", False, None
    para: list[str] = []
    start = 0

    def flush() -> None:
        if para:
            out.append((start, " ".join(para), section))
        para.clear()

    for i, raw in enumerate(lines, start=1):
        line = raw.rstrip()
        stripped = line.strip()
        if stripped.startswith("```"):
            fence = not fence
            flush()
            continue
        if fence:
            continue
        indent = len(line) - len(line.lstrip())
        if directive_indent is not None:
            if not stripped or indent > directive_indent:
                continue
            directive_indent = None
        if rst:
            m = re.match(r"\s*\.\. ([\w-]+)::", line)
            if m and m.group(1) in _NON_PROSE_DIRECTIVES:
                flush()
                directive_indent = indent
                continue
            if stripped.endswith("::") and not stripped.startswith(".."):
                para.append(stripped[:-1])
                flush()
                directive_indent = indent            # the literal block after it
                continue
            if _HEADING_RST.match(stripped) and para and i >= 2:
                title = para.pop() if para else ""
                flush()
                section = f"{i}:{title}"
                continue
        elif _HEADING_MD.match(line):
            flush()
            section = f"{i}:{stripped}"
            continue
        if not stripped or stripped.startswith("|") or stripped.startswith("<!--"):
            flush()
            continue
        if stripped.startswith(("- ", "* ", "+ ")) or re.match(r"\d+\. ", stripped):
            flush()                                  # a list item is its own paragraph
        if not para:
            start = i
        para.append(stripped)
    flush()
    return out


def _sources(text: str, root: Path) -> list[str]:
    """The study files a piece of prose cites."""
    found: list[str] = []
    for ref in _CITATION.findall(text):
        ref = ref.rstrip("/.")
        path = root / ref
        if ref.startswith("studies/results/") and path.is_dir():
            found += [str(p.relative_to(root)) for p in sorted(path.rglob("*"))
                      if p.suffix in RESULT_SUFFIXES]
        elif ref.startswith("studies/results/") and path.is_file():
            found.append(ref)
        elif ref.endswith(".py"):                    # a study script: its results
            stem = Path(ref).stem
            found += [str(p.relative_to(root)) for p in
                      sorted((root / "studies/results").glob(f"{stem}*"))
                      if p.suffix in RESULT_SUFFIXES]
    return found


def claims(root: Path) -> list[Claim]:
    """Every claim in the prose of README.md and docs/, with the sources cited
    around it."""
    pages = [root / "README.md"] + sorted(
        p for p in (root / "docs").rglob("*")
        if p.suffix in (".md", ".rst", ".inc") and not BUILT.intersection(p.parts)
        and p.name != "sg_execution_times.rst")
    out: list[Claim] = []
    for path in pages:
        page = str(path.relative_to(root))
        if page in SKIPPED_PAGES:
            continue
        blocks = _blocks(page, path.read_text(encoding="utf-8"))
        by_section: dict[str, list[str]] = {}
        for _, text, section in blocks:
            by_section.setdefault(section, []).extend(_sources(text, root))
        for line, text, section in blocks:
            prose = _strip_inline(text)
            cited = _sources(text, root) or by_section.get(section, [])
            for m in _CLAIM.finditer(prose):
                if m.group(4):
                    values, written = [m.group(4)], m.group(4)
                else:
                    values = [m.group(1)] + ([m.group(2)] if m.group(2) else [])
                    written = m.group(0).strip()
                out.append(Claim(page, line, written, values, cited))
    return out


def _decimals(value: str) -> int:
    return len(value.split(".")[1]) if "." in value else 0


def _text(path: Path, cache: dict[Path, str]) -> str:
    if path not in cache:
        cache[path] = path.read_text(encoding="utf-8", errors="replace")
    return cache[path]


def _numbers(text: str) -> set[float]:
    return {float(t) for t in _STUDY_NUMBER.findall(text.replace(",", ""))}


def _found(value: str, numbers: set[float]) -> bool:
    v = float(value.replace("−", "-").lstrip("+-"))
    return any(math.isclose(n, v, rel_tol=1e-12, abs_tol=1e-15) for n in numbers)


def _ratio_found(value: str, texts: list[str]) -> bool:
    """A whole-number ratio (32×, 6 times) is found only written as a ratio: small
    whole numbers are everywhere in the tables (splits, folds, counts)."""
    v = value.replace("−", "-").lstrip("+-")
    pattern = re.compile(rf"(?<![\d.]){re.escape(v)}(?:\.0+)?\s?(?:×|x\b|times\b)")
    return any(pattern.search(t) for t in texts)


def _allowed(claim: Claim) -> bool:
    for page, text in ALLOWED:
        if page in ("*", claim.page) and claim.text.replace(" ", "") == text.replace(" ", ""):
            return True
    return False


def unsourced(root: Path) -> list[tuple[Claim, str]]:
    """The claims with no source: (claim, why)."""
    cache: dict[Path, str] = {}
    bad = []
    for claim in claims(root):
        if _allowed(claim):
            continue
        if not claim.sources:
            bad.append((claim, "cites no file of studies/results/ in its paragraph or "
                               "section"))
            continue
        texts = [_text(root / src, cache) for src in sorted(set(claim.sources))]
        numbers: set[float] = set().union(*(_numbers(t) for t in texts))
        ratio = claim.text.rstrip().endswith(("×", "x", "times"))
        missing = [v for v in claim.values
                   if not (_ratio_found(v, texts) if ratio and "." not in v
                           else _found(v, numbers))]
        if missing:
            bad.append((claim, f"{', '.join(missing)} is not in "
                               f"{', '.join(sorted(set(claim.sources)))}"))
    return bad


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[1]
    bad = unsourced(root)
    for claim, why in bad:
        print(f"{claim.page}:{claim.line}: {claim.text!r}: {why}")
    print(f"{len(bad)} unsourced claim(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
