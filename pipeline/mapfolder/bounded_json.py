"""One JSON reader for everything a person or another program may have written: curation.json,
manifest.json and JSONL input lines.

Python's `json` turns `[1e400]` into infinity (an OverflowError later, where it becomes a whole
number), reads a number of a million digits slowly or not at all, and nests as deep as the C stack
allows (a RecursionError, or a structure every later walk of it crashes on). `loads` refuses all of
these with a `BoundedJSONError` saying what is wrong; callers name the file and line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pipeline import UserError

MAX_DEPTH = 64  # arrays and objects inside one another; our files nest 4 deep at most
MAX_NUMBER_CHARS = 40  # digits of one number (topic ids, counts, timings)
MAX_FILE_BYTES = 64 << 20  # a map's manifest or edit file; far above any real one
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")


class BoundedJSONError(ValueError):
    """JSON we refuse to read; the message says why (without the file name)."""


def _number(text: str) -> float | int:
    if len(text) > MAX_NUMBER_CHARS:
        raise BoundedJSONError(f"a number of {len(text)} characters")
    return text


def _float(text: str) -> float:
    _number(text)
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise BoundedJSONError(f"the number {text} is too large")
    return value


def _int(text: str) -> int:
    _number(text)
    return int(text)


def _constant(name: str) -> float:
    raise BoundedJSONError(f"{name} is not a JSON number")


def depth(text: str) -> int:
    """How deep arrays and objects nest in `text` (strings skipped), without parsing it.

    Examples:
        >>> depth('{"a": [1, [2]], "b": "[[["}')
        3
    """
    deepest = level = 0
    for bracket in _BRACKETS.findall(_STRINGS.sub("", text)):
        level += 1 if bracket in "[{" else -1
        deepest = max(deepest, level)
    return deepest


def too_deep(text: str) -> bool:
    """Whether arrays and objects nest more than `MAX_DEPTH` deep in `text`; instant for text with
    fewer brackets than that (every JSONL line of abstracts)."""
    return text.count("[") + text.count("{") > MAX_DEPTH and depth(text) > MAX_DEPTH


def loads(text: str) -> object:
    """`text` as JSON, or a `BoundedJSONError`: nested deeper than `MAX_DEPTH`, a number too long or
    too large for a float (`1e400`), NaN or Infinity, or malformed JSON (a `json.JSONDecodeError`,
    also a ValueError, with `lineno` and `colno`).

    Examples:
        >>> loads('{"ids": [1, 2.5]}')
        {'ids': [1, 2.5]}
        >>> loads("[1e400]")
        Traceback (most recent call last):
        ...
        pipeline.mapfolder.bounded_json.BoundedJSONError: the number 1e400 is too large
    """
    if too_deep(text):
        raise BoundedJSONError(f"arrays or objects nested more than {MAX_DEPTH} deep")
    try:
        return json.loads(text, parse_float=_float, parse_int=_int, parse_constant=_constant)
    except RecursionError:  # cannot happen below MAX_DEPTH; kept so no input ever shows a traceback
        raise BoundedJSONError(f"arrays or objects nested more than {MAX_DEPTH} deep") from None


def reason(exc: ValueError) -> str:
    """What is wrong, for an `error:` line: "line 3, column 7: Expecting value" or the refusal."""
    if isinstance(exc, json.JSONDecodeError):
        return f"line {exc.lineno}, column {exc.colno}: {exc.msg}"
    return str(exc)


def read_json_file(path: Path, what: str) -> object:
    """A whole JSON file (at most `MAX_FILE_BYTES`), or a `UserError` naming `path` and `what` it is
    ("damaged manifest", "damaged edit file"), never a traceback."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except PermissionError:
        raise UserError(f"{path}: cannot read the file (permission denied)") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    if len(data) > MAX_FILE_BYTES:
        raise UserError(f"{path}: {what} (larger than {MAX_FILE_BYTES >> 20} MB)")
    try:
        return loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: {what} (not UTF-8 text at byte {exc.start})") from None
    except ValueError as exc:
        raise UserError(f"{path}: {what} ({reason(exc)})") from None
