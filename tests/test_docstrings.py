"""The API reference's summaries: every name listed in docs/api.rst has a docstring
whose first line is a complete sentence, so that the summary table (the docstring up
to its first full stop) is never cut inside an abbreviation such as "eq." or "Alg."."""

import importlib
import inspect
import re
from pathlib import Path

import pytest

API = Path(__file__).resolve().parents[1] / "docs" / "api.rst"
# a full stop that does not end a sentence: autosummary would cut the summary there
ABBREVIATION = re.compile(r"\b(?:Alg|Algs|eqs?|Eqs?|Sect|Sec|Fig|Figs|al|e\.g|i\.e|cf|vs|"
                          r"resp|approx|No|Thm|Prop|ch|pp)\.\s")


def _api_names():
    names, module = [], "kernelselect"
    for line in API.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\.\. currentmodule:: (\S+)", line)
        if m:
            module = m.group(1)
        m = re.match(r"   ([A-Za-z_][\w.]*)\s*$", line)
        if m:
            names.append(f"{module}.{m.group(1)}")
    return names


def _resolve(full):
    parts = full.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:]:
            obj = getattr(obj, part)
        return obj
    raise ImportError(full)


def test_the_api_page_lists_names():
    assert len(_api_names()) > 50


@pytest.mark.parametrize("name", _api_names())
def test_first_docstring_line_is_a_complete_sentence(name):
    pytest.importorskip("sklearn")                       # the estimators' module needs it
    doc = inspect.getdoc(_resolve(name)) or ""
    first = doc.splitlines()[0].strip() if doc else ""
    assert first, f"{name} has no docstring"
    assert first.endswith("."), f"{name}: the first line {first!r} does not end a sentence"
    assert not ABBREVIATION.search(first + " "), (
        f"{name}: the first line {first!r} has an abbreviation with a full stop, where the "
        "API summary would be cut")
