"""`primaryLocationLineHash`, computed as GitHub's upload-sarif computes it, so both agree.

GitHub code scanning matches alerts across commits by `partialFingerprints.primaryLocationLineHash` (it
ignores other keys). When a result lacks one, the upload action hashes the file itself and warns when a
given value differs; this module produces the same value: a polynomial rolling hash (base 37, modulo
2**64) over the first 100 characters from the start of each line, ignoring spaces and tabs, with CR and
CRLF read as LF, an end-of-file mark (65535) and zero padding; the value is `<hex>:<n>`, where n counts
earlier lines of the file with the same hash. Characters are UTF-16 code units, as in JavaScript.
"""

from __future__ import annotations

from collections.abc import Iterator

BLOCK = 100
BASE = 37
MASK = (1 << 64) - 1
EOF_MARK = 65535
_FIRST = pow(BASE, BLOCK, 1 << 64)


def line_hashes(text: str) -> dict[int, str]:
    """Line number (1-based) -> hash, for every line of `text`."""
    return dict(_hashes(_units(text)))


def _units(text: str) -> Iterator[int]:
    data = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        yield data[i] | data[i + 1] << 8
    yield EOF_MARK


def _hashes(units: Iterator[int]) -> Iterator[tuple[int, str]]:
    window = [0] * BLOCK
    starts = [-1] * BLOCK  # the line number starting at this window slot, or -1
    value = index = line = 0
    line_start, prev_cr = True, False
    counts: dict[str, int] = {}

    def emit() -> tuple[int, str]:
        key = format(value, "x")
        counts[key] = counts.get(key, 0) + 1
        number, starts[index] = starts[index], -1
        return number, f"{key}:{counts[key]}"

    def push(unit: int) -> None:
        nonlocal value, index
        value = (BASE * value + unit - _FIRST * window[index]) & MASK
        window[index] = unit
        index = (index + 1) % BLOCK

    for unit in units:
        if unit in (0x20, 0x09) or (prev_cr and unit == 0x0A):
            prev_cr = False
            continue
        prev_cr = unit == 0x0D
        if prev_cr:
            unit = 0x0A
        if starts[index] != -1:
            yield emit()
        if line_start:
            line_start = False
            line += 1
            starts[index] = line
        line_start = unit == 0x0A
        push(unit)
    for _ in range(BLOCK):
        if starts[index] != -1:
            yield emit()
        push(0)
