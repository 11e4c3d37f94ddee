"""The layout registry: one place names layouts; unsupported operations fail clearly."""

from __future__ import annotations

import pytest

from versioned.errors import NotSupportedError, SchemaError
from versioned.layouts.abilities import (
    CanCountLiveRows,
    CanImportFiles,
    CanIngest,
    CanMutate,
    CanPlanCompaction,
    CanStreamChanges,
    imports_files,
    ingests,
    mutates,
    plans_compaction,
    streams_changes,
)
from versioned.layouts.base import OPERATIONS, StorageLayout, layout_names, layout_of, layouts
from versioned.schema import TableSpec


def test_the_registry_lists_the_layouts_default_first() -> None:
    assert [layout.name for layout in layouts()] == ["versioned", "acid"]
    assert layout_names() == ("versioned", "acid")
    assert TableSpec.build("db.t", columns="id BIGINT", primary_key="id").layout == "versioned"


def test_creating_a_table_of_an_unknown_layout_names_the_known_ones(tmp_path) -> None:
    from versioned.api.catalog import connect

    unknown = r"unknown layout 'hudi'; use one of acid, versioned"
    with (
        connect(warehouse=str(tmp_path / "wh"), user="alice") as cat,
        pytest.raises(SchemaError, match=unknown),
    ):
        cat.create_table("db.t", columns="id BIGINT, v STRING", primary_key="id", layout="hudi")


def test_unknown_layout_names_the_known_ones() -> None:
    with pytest.raises(SchemaError, match=r"unknown layout 'hudi'.*acid.*versioned"):
        layout_of("hudi")


def test_versioned_layout_supports_every_operation() -> None:
    layout = layout_of("versioned")
    assert all(layout.supports(op) for op in OPERATIONS)
    assert layout.default_file_format == "parquet"


def test_unsupported_operation_names_layout_and_operation() -> None:
    # Both registered layouts support every operation now: a layout without views.
    narrow = StorageLayout(
        name="acid",
        description="a layout without views",
        capabilities=frozenset({"create", "read"}),
        file_formats=("orc",),
        transaction_dirs=r"^txn=(\d+)$",
        data_kinds=frozenset({"base", "delta"}),
        entry_kinds=("delete_events", frozenset({"delete_delta"})),
    )
    with pytest.raises(NotSupportedError) as caught:
        narrow.require("views", "db.t")
    assert caught.value.layout == "acid"
    assert caught.value.operation == "views"
    assert "views of db.t" in str(caught.value)
    assert caught.value.exit_code == 2


def test_not_supported_error_pickles_with_its_attributes() -> None:
    import pickle

    error = NotSupportedError.of("acid", "read", "db.t")
    again = pickle.loads(pickle.dumps(error))
    assert (again.layout, again.operation, again.table, str(again)) == (
        "acid",
        "read",
        "db.t",
        str(error),
    )


def test_transaction_of_a_path_follows_the_layout() -> None:
    assert layout_of("versioned").transaction_of("a=1/version_id=42/part-0.parquet") == 42
    assert layout_of("versioned").transaction_of("_staging/txn=7/x.parquet") == 7
    assert layout_of("versioned").transaction_of("a=1/part-0.parquet") is None
    # a compaction's folder inside the folder of the version it compacted: the nearest wins
    compacted = "a=1/version_id=3/compacted-9/part-0.parquet"
    assert layout_of("versioned").transaction_of(compacted) == 9
    assert layout_of("versioned").transaction_of(f"_index/{compacted}") == 9
    acid = layout_of("acid")
    assert acid.transaction_of("a=1/delta_0000001_0000003_v0000009/bucket_00000") == 9
    assert acid.transaction_of("a=1/delete_delta_0000001_0000003_v0000009/bucket_00000") == 9
    assert acid.transaction_of("a=1/base_0000003_v0000010/bucket_00000") == 10
    # compaction output since issue 28: named by write ids; its compactor's mark names T
    assert acid.transaction_of("a=1/base_0000003/bucket_00000") is None
    assert acid.transaction_of("a=1/base_0000003/_versioned_compactor_txn=10") == 10
    assert acid.transaction_of("delta_0000001_0000003/_versioned_compactor_txn=11") == 11
    assert acid.transaction_of("_staging/txn=7/x.orc") == 7
    # a writer's delta is named by write id, not transaction id
    assert acid.transaction_of("a=1/delta_0000005_0000005_0000/bucket_00000") is None
    # a major compaction's merged tombstones, and a writer's (named by write id)
    assert acid.transaction_of("a=1/_tombstones/base_0000003_v0000010.orc") == 10
    assert acid.transaction_of("a=1/_tombstones/delete_delta_0000005_0000005_0000.orc") is None


def test_layout_refuses_a_file_format_it_cannot_store() -> None:
    spec = TableSpec.build("db.t", columns="id INT", primary_key="id", file_format="parquet")
    with pytest.raises(SchemaError, match="acid layout stores orc files, not parquet"):
        layout_of("acid").check_spec(spec)
    layout_of("versioned").check_spec(spec)  # no error


ABILITIES = {
    CanIngest: ("ingest_sink",),
    CanStreamChanges: ("change_files", "change_images"),
    CanImportFiles: ("import_files",),
    CanPlanCompaction: ("compaction_due",),
    CanCountLiveRows: ("live_rows",),
    CanMutate: ("mutation_format",),
}
ASKS = (
    (ingests, "stream"),
    (streams_changes, "changes"),
    (imports_files, "import"),
    (plans_compaction, "compact"),
    (mutates, "mutate"),
)


@pytest.mark.parametrize("name", layout_names())
def test_every_ability_a_layout_has_resolves(name: str) -> None:
    """Each method of an ability the layout's class has imports what it names (the
    registry imported nothing of the layout), and the engine loads."""
    layout = layout_of(name)
    had = [kind for kind in ABILITIES if isinstance(layout, kind)]
    assert had, f"{name} has no ability"
    for kind in had:
        for method in ABILITIES[kind]:
            assert getattr(layout, method)() is not None, (name, method)
    assert type(layout.engine()).__name__.endswith("Engine")


def test_the_layouts_have_the_abilities_they_are_known_for() -> None:
    version, acid = layout_of("versioned"), layout_of("acid")
    assert isinstance(version, CanImportFiles) and not isinstance(acid, CanImportFiles)
    assert isinstance(acid, CanMutate) and not isinstance(version, CanMutate)
    assert version.copies_imported_files and not acid.copies_imported_files
    assert all(isinstance(each, CanIngest | CanStreamChanges) for each in (version, acid))


def test_a_missing_ability_is_a_not_supported_error() -> None:
    """The base class has no engine and no ability: no default borrowed from a layout."""
    bare = StorageLayout(
        name="bare",
        description="no abilities",
        capabilities=frozenset({"create"}),
        file_formats=("parquet",),
        transaction_dirs=r"^txn=(\d+)$",
        data_kinds=frozenset({"data"}),
        entry_kinds=("entries", frozenset()),
    )
    for kind in ABILITIES:
        assert not isinstance(bare, kind)
    for ask, operation in ASKS:
        with pytest.raises(NotSupportedError, match=f"bare layout does not support {operation}"):
            ask(bare, "db.t")
    with pytest.raises(NotSupportedError, match="bare layout does not support create"):
        bare.engine()
    assert bare.table_settings(TableSpec.build("db.t", columns="id INT", primary_key="id")) == {}
    assert not bare.copies_imported_files


def test_the_architecture_page_lists_the_abilities_and_who_has_them() -> None:
    """docs/architecture.md's table of abilities names every protocol of
    `versioned.layouts.abilities` with its methods, and its sentence on who has which is
    what the registered layouts' classes say."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "architecture.md").read_text()
    rows = re.findall(r"^\| `(Can\w+)` \| (.*?) \|", page, re.MULTILINE)
    assert {name for name, _ in rows} == {kind.__name__ for kind in ABILITIES}
    for name, cell in rows:
        kind = next(k for k in ABILITIES if k.__name__ == name)
        assert all(f"`{method}()`" in cell for method in ABILITIES[kind]), name
    acid = {k.__name__ for k in ABILITIES if isinstance(layout_of("acid"), k)}
    version = {k.__name__ for k in ABILITIES if isinstance(layout_of("versioned"), k)}
    missing = {k.__name__ for k in ABILITIES} - version
    said = re.search(
        r"The version layout has every ability but ([^;]+); the acid layout has ([^(]+)\(", page
    )
    assert said is not None
    assert set(re.findall(r"`(Can\w+)`", said.group(1))) == missing
    assert set(re.findall(r"`(Can\w+)`", said.group(2))) == acid
