"""Partition directory names escaped exactly the way Hive escapes them.

Hive's ``FileUtils.escapePathName`` replaces each ASCII character of a fixed set (control
characters, ``"#%'*/:=?\\{[]^`` and DEL) with ``%XX`` (upper-case hex). Non-ASCII characters
stay as they are. A null or empty value becomes ``__HIVE_DEFAULT_PARTITION__``. Because ``/``
and ``%`` are always escaped, a value can never add, remove or climb a directory level, and
unescaping returns the value exactly, with one exception Hive has too: the literal value
``__HIVE_DEFAULT_PARTITION__`` escapes to the null partition's name, so feeds dead-letter it
and the catalog refuses it. A directory name (``k=v``) longer than `MAX_SEGMENT_BYTES` is
refused the same ways (`segment_bytes`).
"""

from __future__ import annotations

from collections.abc import Sequence

DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"
# Longest directory name (one path component) most file systems accept, in bytes.
MAX_SEGMENT_BYTES = 255

_ESCAPED = frozenset(
    [chr(c) for c in range(0x01, 0x20)]
    + ['"', "#", "%", "'", "*", "/", ":", "=", "?", "\\", "\x7f", "{", "[", "]", "^"]
)
_HEX = frozenset("0123456789abcdefABCDEF")


def escape_path_name(value: str) -> str:
    """Escape one partition value (or key) for use in a directory name."""
    if value == "":
        return DEFAULT_PARTITION_NAME
    # NUL is not in Hive's table, but no file system accepts it in a name.
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED or c == "\x00" else c for c in value)


def unescape_path_name(name: str) -> str:
    """Inverse of `escape_path_name` for any escaped name."""
    out: list[str] = []
    i = 0
    while i < len(name):
        ch = name[i]
        if ch == "%" and i + 2 < len(name) and name[i + 1] in _HEX and name[i + 2] in _HEX:
            out.append(chr(int(name[i + 1 : i + 3], 16)))
            i += 3
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def partition_value_to_path(value: str | None) -> str:
    """Escape a partition value; ``None`` and ``""`` map to Hive's default partition name."""
    if value is None or value == "":
        return DEFAULT_PARTITION_NAME
    return escape_path_name(value)


def partition_path(keys: Sequence[str], values: Sequence[str | None]) -> str:
    """``k1=v1/k2=v2`` with each key and value escaped; ``""`` for an unpartitioned table."""
    if len(keys) != len(values):
        raise ValueError(f"{len(keys)} partition keys but {len(values)} values")
    pairs = zip(keys, values, strict=True)
    return "/".join(f"{escape_path_name(k)}={partition_value_to_path(v)}" for k, v in pairs)


def parse_partition_path(path: str) -> list[tuple[str, str | None]]:
    """Parse ``k1=v1/k2=v2`` back into ``[(k1, v1), (k2, v2)]`` (default partition -> None)."""
    pairs: list[tuple[str, str | None]] = []
    for segment in [s for s in path.split("/") if s]:
        key, sep, raw = segment.partition("=")
        if not sep:
            raise ValueError(f"partition directory {segment!r} is not of the form key=value")
        value = None if raw == DEFAULT_PARTITION_NAME else unescape_path_name(raw)
        pairs.append((unescape_path_name(key), value))
    return pairs


def segment_bytes(key: str, value: str | None) -> int:
    """Length in bytes of the directory name ``k=v`` of one partition value."""
    return len(f"{escape_path_name(key)}={partition_value_to_path(value)}".encode())


def escaped_chars_pattern() -> str:
    """A Java regular expression character class matching each character
    `escape_path_name` escapes (for computing escaped lengths in Spark)."""
    return "[" + "".join(f"\\x{{{ord(c):X}}}" for c in sorted(_ESCAPED | {"\x00"})) + "]"


def is_hidden(path: str) -> bool:
    """Whether Spark would skip the file when listing: a segment starts with ``.``, or with
    ``_`` and is not a ``key=value`` partition directory."""
    return any(
        s.startswith(".") or (s.startswith("_") and "=" not in s) for s in path.split("/") if s
    )
