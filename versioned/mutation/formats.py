"""The mutation format of a sink table's layout, from the registry.

What mutations become on storage, and how the rows they name are checked at commit, is the
layout's (`versioned.layouts.mutation_format.MutationFormat`, from its
`versioned.layouts.abilities.CanMutate` ability); the client asks the registry for it and
never names a layout.
"""

from __future__ import annotations

from versioned.errors import NotSupportedError
from versioned.layouts.abilities import CanMutate
from versioned.layouts.base import layout_of, layouts
from versioned.layouts.mutation_format import MutationFormat
from versioned.schema import TableSpec

OPERATION = "mutate"
"""The operation a layout without a `MutationFormat` does not support."""


def format_for(spec: TableSpec) -> MutationFormat:
    """The `MutationFormat` of the table's layout.

    Raises:
        NotSupportedError: The layout has none (``operation="mutate"``): its tables cannot
            be sink tables of the mutation API.
    """
    layout = layout_of(spec.layout)
    if not isinstance(layout, CanMutate):
        able = [other.name for other in layouts() if isinstance(other, CanMutate)]
        needed = f"layout {' or '.join(able)}" if able else "a layout that stores them"
        raise NotSupportedError(
            f"{spec.name} is a {spec.layout} table: the mutation API writes ROW__ID-ordered "
            f"mutations, which the {spec.layout} layout does not store, so its sink tables "
            f"must have {needed}",
            layout=spec.layout,
            operation=OPERATION,
            table=str(spec.name),
        )
    return layout.mutation_format()
