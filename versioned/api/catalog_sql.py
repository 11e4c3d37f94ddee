"""Spark SQL over a catalog's tables (`Catalog.register_views`, `Catalog.sql`): each table a
view of its latest commit, its metadata tables as ``db.table__KIND`` views, and read-only
queries in a session of their own.

A view is registered through its layout's engine (``register_view``); one that shows the
table's latest commit already is left alone (no catalog read, no DDL).
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING

from versioned.api.metadata_tables import KINDS as METADATA_KINDS
from versioned.api.metadata_tables import METADATA_FOLDER, metadata_name, metadata_target
from versioned.catalog.records import TableInfo
from versioned.errors import NoSuchTableError, PermissionDeniedError
from versioned.layouts.base import layout_of
from versioned.names import TableName
from versioned.storage.filesystem import FileIO

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from versioned.api.catalog import Catalog


class CatalogSql:
    """The views and queries of one catalog (held by `Catalog`)."""

    def __init__(self, catalog: Catalog) -> None:
        self._catalog = catalog

    @property
    def _source(self) -> str:
        """What a view records as where its rows come from: the catalog and the warehouse."""
        warehouse = self._catalog.engine_context.fileio.full_path("")
        return f"{self._catalog.settings.catalog_url}|{warehouse}"

    def register_views(
        self, spark: SparkSession | None = None, *, metadata: bool = False
    ) -> list[str]:
        """`Catalog.register_views`: every readable table's view (and with ``metadata``
        its metadata tables' views) registered in ``spark``; the names registered."""
        session = spark or self._catalog.spark
        infos = [i for i in self._catalog.tables() if layout_of(i.spec.layout).supports("views")]
        registered = self._register(session, infos)
        if metadata:
            for info in self._catalog.tables():
                for kind in METADATA_KINDS:
                    name = metadata_name(info.spec.name, kind)
                    if not self._exists(name):
                        registered.append(self._register_metadata(session, name))
        return registered

    def sql(self, query: str) -> DataFrame:
        """`Catalog.sql`: the query's tables' views refreshed, then the query run in a
        session of its own where files, paths and Java methods are out of reach."""
        from versioned.engine.spark.errors import user_query_errors
        from versioned.engine.spark.sql_guard import query_tables

        session = self._query_session
        infos, metadata = [], []
        for name in query_tables(session, query):
            target = metadata_target(name)
            if target is not None and not self._exists(name):
                metadata.append(name)
                continue
            info = self._catalog.engine_context.store.table(
                name
            )  # raises unless it exists and the user may read it
            layout_of(info.spec.layout).require("views", name)
            infos.append(info)
        self._register(session, infos)
        for name in metadata:
            self._register_metadata(session, name)
        with user_query_errors():
            return session.sql(query)

    def _exists(self, name: TableName) -> bool:
        """Whether a table of this name exists (whether the user may read it or not)."""
        try:
            self._catalog.engine_context.store.table(name)
        except NoSuchTableError:
            return False
        except PermissionDeniedError:
            return True
        return True

    def _register_metadata(self, session: SparkSession, name: TableName) -> str:
        """Register the metadata table ``name`` (``db.t__history``...) in ``session``."""
        from versioned.engine.spark.metadata_views import register_metadata_view

        target = metadata_target(name)
        assert target is not None
        rows = self._catalog.table(target[0]).metadata(target[1])
        fileio, folder = self._metadata_files
        source = self._source
        return register_metadata_view(
            session, name, rows, fileio=fileio, folder=folder, source=source
        )

    @cached_property
    def _metadata_files(self) -> tuple[FileIO, str]:
        """Where metadata views keep their rows: a temporary folder of this process when
        Spark runs locally, else ``_versioned_metadata/`` in the warehouse (executors on
        other machines read it there)."""
        if not str(self._catalog.spark.sparkContext.master).startswith("local"):
            return self._catalog.engine_context.fileio, METADATA_FOLDER
        folder = tempfile.mkdtemp(prefix="versioned-metadata-")
        atexit.register(shutil.rmtree, folder, True)
        return FileIO.for_root(folder), "views"

    @cached_property
    def _query_session(self) -> SparkSession:
        from versioned.engine.spark.sql_guard import query_session

        return query_session(self._catalog.spark)

    def _register(self, session: SparkSession, tables: Sequence[TableInfo]) -> list[str]:
        """Register the views of ``tables`` (as just read from the catalog) in ``session``.

        A view that shows a table's latest commit already is left alone: that costs no
        further catalog read and no DDL, only a look at the view's properties in the
        session catalog.
        """
        from versioned.engine.spark.catalog_views import shows_commit
        from versioned.layouts.engine_protocol import engine_for

        source = self._source
        context = self._catalog.engine_context
        registered = []
        for info in tables:
            name = info.spec.name
            root = self._catalog.engine_context.fileio.full_path(info.location)
            limit = self._catalog.broadcast_limit
            if shows_commit(session, info, source=source, root=root, broadcast_limit=limit):
                registered.append(str(name))
                continue
            snapshot = self._catalog.engine_context.store.snapshot(name)
            engine = engine_for(layout_of(snapshot.table.spec.layout), "views", name)
            registered.append(engine.register_view(context, session, snapshot, source))
        return registered
