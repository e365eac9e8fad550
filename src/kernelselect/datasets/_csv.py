"""The CSV / TSV reader: text decoded strictly in a stated encoding, the delimiter
and the header row told from the data (or given), a target column by index or name,
missing values refused with the line they are on.

How the first row is told to be a header ("auto")
-------------------------------------------------
Column names are text and data are numbers, so a header differs *in kind* from the
rows below it. The first row is a header when

1. in some column it holds text (not a number, not a missing-value token) while every
   other row of that column holds a number (or a missing value) — a named numeric
   column; or
2. it is exactly the column numbers ``0, 1, …, w−1`` or ``1, 2, …, w`` written as whole
   numbers, with at least three columns — what ``pandas.DataFrame.to_csv`` writes for
   a frame with default column labels, and what a numbered header looks like.

Otherwise it is data. So a headerless file with text labels (``yes``/``no``) keeps its
first row (text above text is no evidence), and a header of names over numbers is
found whatever its length. The two readers this is weighed against: pandas takes the
first row as the header unless told (a headerless file loses a row), and
``csv.Sniffer.has_header`` votes on the first 20 rows with the length of text fields
as a feature (a label column of short words votes either way); neither finds a
numbered header. Rule 2 can misread a genuine first data row that happens to be
``0, 1, …, w−1``; ``header=False`` (``--no-header``) settles it, and the result always
says which rule decided (``meta["header_rule"]``).
"""

from __future__ import annotations

import codecs
import csv
import itertools
import os
import re
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np

from ..utils._resources import check_allocation
from ._base import (MAX_DENSE_BYTES, _MISSING_TOKENS, Dataset, _check_path, _check_target,
                    _check_task, _dense_guard, _finish_target, _finite_X)

#: Candidate delimiters, in order of preference on a tie; None is any run of whitespace.
_DELIMITERS: tuple[str | None, ...] = (",", "\t", ";", "|", None)
#: Rows read to choose the delimiter and tell the header.
_SNIFF_ROWS = 100
#: Rows converted to float64 at a time.
_BLOCK_ROWS = 4096
_WHOLE = re.compile(r"\+?[0-9]+")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
#: Byte-order marks and the encodings they announce (UTF-32 first: its LE mark begins
#: with UTF-16's).
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))


# --------------------------------------------------------------------------- decoding


def _codec_name(encoding: Any) -> str:
    if not isinstance(encoding, str):
        raise TypeError(f"encoding must be the name of a text encoding (str), got "
                        f"{type(encoding).__name__}.")
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        raise ValueError(f"encoding={encoding!r} is not a known text encoding; use e.g. "
                         "'utf-8', 'latin-1', 'cp1252' or 'utf-16'.") from None


def _family(codec: str) -> str:
    """utf-8 / utf-16 / utf-32 / other, from a codecs name (e.g. 'utf-16-le')."""
    for fam in ("utf-8", "utf-16", "utf-32"):
        if codec.startswith(fam):
            return fam
    return "other"


def decode_text(raw: bytes, encoding: str, source: str | Path) -> str:
    """``raw`` decoded strictly in ``encoding``: a byte the encoding cannot read is an
    error naming the file, the byte offset and the encoding, never a replacement
    character (which would merge distinct labels such as ``café`` and ``cafè``).

    A UTF-8 byte-order mark is dropped; a UTF-16/32 mark with another encoding given,
    and NUL characters (UTF-16 text without a mark read as UTF-8), are refused with
    the encoding to pass.
    """
    codec = _codec_name(encoding)
    family = _family(codec)
    bom = next((name for mark, name in _BOMS if raw.startswith(mark)), None)
    if bom is not None and bom != "utf-8" and family != bom:
        raise ValueError(f"{source}: the file starts with a {bom.upper()} byte-order mark but "
                         f"is read as {encoding}; pass encoding='{bom}' (--encoding {bom}).")
    if bom == "utf-8" and family == "utf-8":
        codec = "utf-8-sig"
    try:
        text = raw.decode(codec)
    except UnicodeDecodeError as exc:
        byte = raw[exc.start:exc.start + 1]
        shown = f" (0x{byte[0]:02x})" if byte else ""
        hint = ("'latin-1' or 'cp1252'" if family == "utf-8" else "'utf-8'")
        raise ValueError(
            f"{source}: byte {exc.start}{shown} is not valid {encoding} ({exc.reason}); pass "
            f"the file's encoding, e.g. encoding={hint} (--encoding), or fix that byte."
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    nul = text.find("\x00")
    if nul >= 0:
        raise ValueError(
            f"{source}: NUL characters (the first at character {nul}) in text read as "
            f"{encoding}; UTF-16 text without a byte-order mark looks like this: pass "
            "encoding='utf-16-le' or 'utf-16-be' (--encoding)."
        )
    return text


# --------------------------------------------------------------------------- rows


def _kind(field: str) -> str:
    """"missing", "number" or "text"."""
    if field.lower() in _MISSING_TOKENS:
        return "missing"
    try:
        float(field)
    except ValueError:
        return "text"
    return "number"


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text`` with their ends (\n, \r\n or \r), without copying it
    whole (``io.StringIO`` would hold four bytes a character)."""
    for match in _LINE.finditer(text):
        yield match.group()


def _kept_lines(text: str, comment: str | None, numbers: list[int]) -> Iterator[str]:
    """The non-blank, non-comment lines (line ends \\n, \\r\\n or \\r alike); appends
    the 1-based line number of each line it yields to ``numbers``."""
    for lineno, line in enumerate(_lines(text), start=1):
        stripped = line.strip()
        if not stripped or (comment and stripped.startswith(comment)):
            continue
        numbers.append(lineno)
        yield line


def _rows(text: str, delimiter: str | None, comment: str | None) -> Iterator[tuple[int, list[str]]]:
    """(line number, stripped fields) for each record of ``text``."""
    numbers: list[int] = []
    lines = _kept_lines(text, comment, numbers)
    if delimiter is None:
        for line in lines:
            yield numbers[-1], line.split()
        return
    reader = csv.reader(lines, delimiter=delimiter)
    consumed = 0
    for fields in reader:
        yield numbers[consumed], [f.strip() for f in fields]
        consumed = reader.line_num


def _sniff_delimiter(text: str, comment: str | None) -> str | None:
    """The candidate delimiter under which the first rows all have one width ≥ 2, and
    the most fields read as numbers (ties: the order of :data:`_DELIMITERS`)."""
    best: tuple[int, str | None] | None = None
    for delim in _DELIMITERS:
        if delim is not None and delim not in text[:1 << 16]:
            continue
        try:
            sample = []
            for row in _rows(text, delim, comment):
                sample.append(row[1])
                if len(sample) == _SNIFF_ROWS:
                    break
        except csv.Error:
            continue
        widths = {len(f) for f in sample}
        if len(widths) != 1 or widths.pop() < 2:
            continue
        score = sum(_kind(f) != "text" for fields in sample[1:] for f in fields)
        if best is None or score > best[0]:
            best = (score, delim)
    if best is not None:
        return best[1]
    first = next((line for line in _lines(text)
                  if line.strip() and not (comment and line.strip().startswith(comment))), "")
    return next((c for c in (",", ";", "\t") if c in first), None)


def _header_rule(first: list[str], rest: list[list[str]]) -> tuple[bool, str]:
    """Whether ``first`` is a header row, and why (see the module notes)."""
    width = len(first)
    for j, field in enumerate(first):
        if _kind(field) != "text":
            continue
        below = [_kind(r[j]) for r in rest if len(r) == width]
        if below and "text" not in below and "number" in below:
            return True, (f"auto: the first row has the text {field!r} above numbers in "
                          f"column {j}")
    if not rest:
        text = any(_kind(f) == "text" for f in first)
        return text, f"auto: a single row, {'with' if text else 'without'} text"
    if width >= 3 and all(_WHOLE.fullmatch(f) for f in first):
        values = [int(f) for f in first]
        if values in (list(range(width)), list(range(1, width + 1))):
            return True, (f"auto: the first row numbers the columns "
                          f"{values[0]}…{values[-1]}")
    return False, "auto: the first row is of the same kind as the rows below it"


def _target_index(target: int | str, names: list[str] | None, width: int, path: Path,
                  header_rule: str) -> int:
    if isinstance(target, str):
        if names is None:
            raise ValueError(
                f"target={target!r} names a column but {path} is read without a header row "
                f"({header_rule}); give the column's index, or header=True (--header)."
            )
        where = [j for j, name in enumerate(names) if name == target]
        if not where:
            raise ValueError(f"target={target!r} is not a column of {path}; columns: "
                             f"{', '.join(names)}.")
        if len(where) > 1:
            raise ValueError(
                f"target={target!r} names {len(where)} columns of {path} (positions "
                f"{', '.join(map(str, where))}); give the index of the one you mean "
                "(e.g. --target " f"{where[-1]}), or rename the columns."
            )
        return where[0]
    if not -width <= target < width:
        raise ValueError(f"target={target} is out of range for the {width} columns of {path} "
                         f"(indices {-width}…{width - 1}).")
    return target % width


# --------------------------------------------------------------------------- reader


def _columns(spec: Any, names: list[str] | None, width: int, t: int, path: Path,
             option: str, header_rule: str) -> list[int]:
    """The column indices named by ``spec`` (indices and/or header names), checked: each
    one a column of the file, none twice, none the target."""
    items = [spec] if isinstance(spec, (str, int, np.integer)) else list(spec)
    if not items:
        raise ValueError(f"{option}: the list of columns is empty.")
    out: list[int] = []
    for item in items:
        if isinstance(item, str) and names is None:
            raise ValueError(
                f"{option}: {item!r} names a column but {path} is read without a header row "
                f"({header_rule}); give column indices, or header=True (--header)."
            )
        try:
            j = _target_index(_check_column(item, option), names, width, path, header_rule)
        except ValueError as exc:       # its words speak of the target
            raise ValueError(f"{option}: " + str(exc).replace(f"target={item!r}", repr(item))
                             .replace(f"target={item}", f"column {item}")) from None
        if j == t:
            raise ValueError(f"{option}: column {j} is the target; list feature columns only.")
        if j in out:
            raise ValueError(f"{option}: column {j} is listed twice.")
        out.append(j)
    return out


def _check_column(item: Any, option: str) -> int | str:
    try:
        return _check_target(item)
    except TypeError:
        raise TypeError(f"{option}: a column is an index (int) or a name (str), got "
                        f"{item!r} ({type(item).__name__}).") from None


def _feature_columns(features: Any, drop: Any, names: list[str] | None, width: int, t: int,
                     path: Path, header_rule: str) -> list[int]:
    """The feature columns, in file order: every column but the target, or those
    ``features`` lists, less those ``drop`` lists."""
    if features is not None and drop is not None:
        raise ValueError("give either features=... (--feature-columns) or drop=... (--drop), "
                         "not both.")
    if features is not None:
        return sorted(_columns(features, names, width, t, path, "features", header_rule))
    dropped = set() if drop is None else set(_columns(drop, names, width, t, path, "drop",
                                                      header_rule))
    keep = [j for j in range(width) if j != t and j not in dropped]
    if not keep:
        raise ValueError("drop: every feature column is dropped; keep at least one.")
    return keep


def _text_column_message(path: Path, lineno: int, value: str, j: int,
                         names: list[str] | None) -> str:
    """The message for text in a feature column: name the column and the two ways to
    leave it out."""
    col = f"column {j} {names[j]!r}" if names is not None else f"column {j}"
    ref = names[j] if names is not None else str(j)
    return (f"{path}:{lineno}: {col} holds text ({value!r}); features must be numbers. "
            f"Leave the column out with drop=[{ref!r}] (command line: --drop {ref}), or choose "
            f"the feature columns with features=[...] (--feature-columns COL,COL,...); encode "
            "categories as numbers first to use them.")


def _parse_rows(rows: Iterable[tuple[int, list[str]]], width: int, t: int,
                names: list[str] | None, delimiter: str | None, path: Path,
                max_dense_bytes: float, feature_cols: list[int] | None = None
                ) -> tuple[np.ndarray, list[str], list[int]]:
    """(the features as one float64 array, the target fields, their line numbers) of
    the split rows, converted in blocks of ``_BLOCK_ROWS`` rows under the memory guard;
    a field that is not a number is an error naming its line and column (and, when
    more than half the block's rows hold text there, a text column: the options that
    leave it out). ``feature_cols``: the columns kept
    as features (default every column but the target)."""
    if feature_cols is None:
        feature_cols = [j for j in range(width) if j != t]
    every = len(feature_cols) == width - 1
    d = len(feature_cols)
    blocks: list[np.ndarray] = []
    pending: list[list[str]] = []     # feature fields of rows not yet converted
    y_raw: list[str] = []
    linenos: list[int] = []

    def convert() -> None:
        """Turn the pending rows into one float64 block (numpy parses the strings);
        on failure, find the field and say where it is."""
        try:
            blocks.append(np.array(pending, dtype=np.float64).reshape(len(pending), d))
        except ValueError:
            first = len(y_raw) - len(pending)
            for r, values in enumerate(pending):
                for k, text_ in enumerate(values):
                    try:
                        float(text_)
                    except ValueError:
                        j = feature_cols[k]
                        lineno = linenos[first + r]
                        kinds = [_kind(row[k]) for row in pending]
                        if kinds.count("text") * 2 > len(kinds):     # a text column
                            raise ValueError(_text_column_message(path, lineno, text_, j,
                                                                  names)) from None
                        what = ("a missing value" if text_.lower() in _MISSING_TOKENS
                                else f"{text_!r}")
                        col = names[j] if names is not None else f"column {j}"
                        raise ValueError(
                            f"{path}:{lineno}: {what} in {col}; features must be "
                            "numbers (impute or drop such rows first)."
                        ) from None
            # every field reads with float() though numpy's parser refused one
            blocks.append(np.array([[float(v) for v in values] for values in pending],
                                   dtype=np.float64).reshape(len(pending), d))
        pending.clear()
        _dense_guard(len(y_raw), d, max_dense_bytes, path)

    def parse(lineno: int, fields: list[str]) -> None:
        if len(fields) != width:
            raise ValueError(
                f"{path}:{lineno}: expected {width} fields, found {len(fields)} (delimiter "
                f"{'whitespace' if delimiter is None else repr(delimiter)}; pass "
                "delimiter=... if it is another)."
            )
        if not fields[t]:
            raise ValueError(f"{path}:{lineno}: the target (column {t}) is empty; drop or fill "
                             "such rows first.")
        y_raw.append(fields[t])
        pending.append([f for j, f in enumerate(fields) if j != t] if every
                       else [fields[j] for j in feature_cols])
        linenos.append(lineno)
        if len(pending) == _BLOCK_ROWS:
            convert()

    try:
        for lineno, fields in rows:
            parse(lineno, fields)
    except csv.Error as exc:
        raise ValueError(f"{path}: cannot split the lines into fields ({exc}).") from None
    if pending:
        convert()
    return (np.concatenate(blocks) if len(blocks) > 1 else blocks[0]), y_raw, linenos


# Over 80 lines with its docstring; its code is 73 lines (the rows are parsed by
# _parse_rows).
def load_csv(path: str | os.PathLike[str], target: int | str = -1, *, delimiter: str | None = None,
             header: bool | str = "auto", task: str = "auto", comment: str | None = "#",
             encoding: str = "utf-8", max_dense_bytes: float = MAX_DENSE_BYTES,
             features: Any = None, drop: Any = None) -> Dataset:
    """Read a delimited text file of numbers into a :class:`Dataset`.

    Parameters
    ----------
    path : str or path-like
    target : int or str, default -1
        The target column: an index (negative counts from the end) or, when the file
        has a header, a column name (which must name one column only). Every other
        column is a feature.
    delimiter : str, optional
        Field separator; by default the one of ``,`` tab ``;`` ``|`` and whitespace
        under which the first rows all have the same number (≥ 2) of fields, the
        most of them numbers. Fields may be quoted (``"..."``).
    header : bool or "auto", default "auto"
        Whether the first non-comment line holds column names. "auto": yes when it
        holds text above a column of numbers, or is the column numbers
        0…w−1 / 1…w (the module notes give the rule and why);
        ``meta["header"]`` and ``meta["header_rule"]`` say what was decided.
    task : {"auto", "binary", "regression", "multiclass"}, default "auto"
        "auto": :func:`kernelselect.utils._targets.detect_task` (two distinct targets →
        binary, mapped to ±1; text labels or class codes → multiclass; other numbers
        → regression). The target may be text (e.g. ``yes``/``no``) for "binary" and
        "multiclass"; features must be numbers.
    comment : str, default "#"
        Lines starting with this are skipped.
    encoding : str, default "utf-8"
        The text encoding; a UTF-8 byte-order mark is skipped. Bytes the encoding
        cannot read are an error naming their offset (pass e.g. ``"latin-1"``).
    max_dense_bytes : int, default 2 GiB
    features : int, str or list of them, optional
        The feature columns (indices or, with a header, names); every other column but
        the target is left out. Default: every column but the target.
    drop : int, str or list of them, optional
        Columns left out of the features (e.g. a text column such as an identifier or
        a city name). Give ``features`` or ``drop``, not both.

    Returns
    -------
    Dataset
        ``X``, ``y``, ``task``, ``name`` (file stem), ``meta`` (``header``,
        ``header_rule``, ``target_column``, ``target_name`` with a header,
        ``encoding``, ``delimiter``, ``feature_columns``: the columns read as
        features, ``n_columns``: the file's) and, with a header, ``feature_names``.

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    TypeError
        For an argument of the wrong type (``header="no"``, ``target=1.7``).
    ValueError
        On undecodable bytes, a missing or non-numeric value or a wrong number of
        fields (the message gives the line number; for text in a feature column it
        names the column and ``drop``/``features``), or an unknown or ambiguous
        target or feature column; for a FIFO, device or socket instead of a file.
    """
    path = _check_path(path)
    target = _check_target(target)
    if not (header == "auto" or isinstance(header, (bool, np.bool_))):
        raise TypeError(f"header must be True, False or 'auto', got {header!r}.")
    task = _check_task(task)
    if delimiter is not None and not (isinstance(delimiter, str) and len(delimiter) == 1):
        raise TypeError(f"delimiter must be one character or None, got {delimiter!r}.")
    if comment is not None and not (isinstance(comment, str) and comment):
        raise TypeError(f"comment must be a non-empty str or None, got {comment!r}.")
    size = path.stat().st_size
    # the bytes, their text and the split fields of one row at a time
    check_allocation(3 * size, f"reading {path} ({size} bytes) as text",
                     "convert it to .npy and read it with open_chunked")
    with open(path, "rb") as fh:
        text = decode_text(fh.read(), encoding, path)
    if delimiter is None:
        delimiter = _sniff_delimiter(text, comment)
    rows = _rows(text, delimiter, comment)
    try:
        head = []
        for row in rows:
            head.append(row)
            if len(head) == _SNIFF_ROWS:
                break
    except csv.Error as exc:
        raise ValueError(f"{path}: cannot split the lines into fields ({exc}).") from None
    if not head:
        raise ValueError(f"{path}: no data lines found.")
    if header == "auto":
        header, header_rule = _header_rule(head[0][1], [f for _, f in head[1:]])
    else:
        header = bool(header)
        header_rule = f"given: header={header}"
    names = None
    if header:
        names = head[0][1]
        head = head[1:]
    width = len(names) if names is not None else len(head[0][1]) if head else 0
    if not head and names is not None:
        raise ValueError(f"{path}: only a header line, no data.")
    if width < 2:
        raise ValueError(
            f"{path}: found one column per line; need features and a target"
            " (is the delimiter right? pass delimiter=...)."
        )
    t = _target_index(target, names, width, path, header_rule)
    keep = _feature_columns(features, drop, names, width, t, path, header_rule)
    X, y_raw, linenos = _parse_rows(itertools.chain(head, rows), width, t, names, delimiter,
                                    path, max_dense_bytes, keep)
    try:
        y_arr = np.asarray([float(v) for v in y_raw])
    except ValueError:
        y_arr = np.asarray(y_raw)
        if task == "regression":
            bad = next(i for i, v in enumerate(y_raw) if _kind(v) == "text")
            raise ValueError(
                f"{path}:{linenos[bad]}: target {y_raw[bad]!r} is not a number (task="
                "'regression'); for class labels use task 'auto', 'binary' or 'multiclass'."
            ) from None
    _finite_X(X, path)
    meta: dict[str, Any] = {
        "source": str(path), "format": "csv", "target_column": t, "header": header,
        "header_rule": header_rule, "encoding": encoding,
        "delimiter": "whitespace" if delimiter is None else delimiter,
        "feature_columns": keep, "n_columns": width,
    }
    y, task, _ = _finish_target(y_arr, task, meta, source=path)
    data = Dataset(X=X, y=y, task=task, name=path.stem, meta=meta)
    if names is not None:
        data["feature_names"] = [names[j] for j in keep]
        meta["target_name"] = names[t]
    return data
