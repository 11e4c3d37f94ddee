"""Reading a layout's numeric table properties, with one error for a bad value."""

from __future__ import annotations

from versioned.errors import SchemaError
from versioned.schema import TableSpec


def whole_number_property(spec: TableSpec, name: str, default: int, zero: str) -> int:
    """The table property ``name`` as a whole number >= 0 (``default`` when unset).

    Args:
        zero: What ``0`` means, for the error message.

    Raises:
        SchemaError: The property is not a whole number >= 0.
    """
    raw = str(spec.properties.get(name, default))
    if not raw.strip().isdigit():
        raise SchemaError(
            f"table property {name}={raw!r} of {spec.name} must be a whole number >= 0 "
            f"(default {default:,}; {zero})",
            property=name,
        )
    return int(raw)
