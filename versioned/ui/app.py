"""The web application: `create_app` builds it over one catalog, acting as its user.

Read-only by construction: every route answers GET (and HEAD) only, and every page is made
from `Table.metadata` rows. A table the user may not read, and one that does not exist, get
the same 404 page, so the page does not tell them apart. Responses forbid everything but
this server's own styles and images (``Content-Security-Policy``): the page runs no script
and loads nothing from elsewhere. While the catalog cannot be reached, every route answers
503 with a page that says so and reloads itself (`RETRY_S`), and one line on stderr.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from datetime import UTC, datetime
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from versioned.api.catalog import Catalog
from versioned.api.catalog_overview import catalog_overview
from versioned.api.table import Table
from versioned.errors import (
    CatalogUnavailableError,
    InvalidNameError,
    NotFoundError,
    PermissionDeniedError,
)
from versioned.ui import RETRY_S, charts, formatting
from versioned.ui.health import IDLE_AFTER_S, LEGEND, WINDOW
from versioned.ui.metadata_cache import MetadataCache
from versioned.ui.pages import (
    LATEST_DEAD_LETTERS,
    RECENT_COMMITS,
    overview,
    table_page,
)

HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
"""Sent with every response."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def create_app(catalog: Catalog, *, cache: MetadataCache | None = None) -> Starlette:
    """The page over ``catalog``, showing what its user may read.

    ``app.state.warm_up()`` computes into the cache the partition rows of every table whose
    commits did not summarise them (written by an older release, or before the table's
    properties changed); ``versioned ui`` runs it in the background as it starts, so that
    the first overview does not compute them all at once.

    Args:
        catalog: The catalog, opened as the user whose grants apply (Spark is never
            started by the page).
        cache: Metadata rows kept per table and commit (a new one by default).
    """
    pages = _Pages(catalog, MetadataCache() if cache is None else cache)
    app = Starlette(
        routes=[
            Route("/", pages.overview, methods=["GET"]),
            Route("/table/{name}", pages.table, methods=["GET"]),
            Route("/table/{name}/commits.svg", pages.commits_chart, methods=["GET"]),
            Route("/table/{name}/partitions.svg", pages.partitions_chart, methods=["GET"]),
            Mount("/static", StaticFiles(packages=[("versioned.ui", "static")]), name="static"),
        ],
        exception_handlers={
            HTTPException: pages.error,
            CatalogUnavailableError: pages.unavailable,
        },
    )
    app.add_middleware(_Headers)
    app.state.warm_up = pages.warm_up
    return app


def _templates() -> Jinja2Templates:
    env = Environment(
        loader=PackageLoader("versioned.ui", "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        local_time=formatting.local_time,
        age=formatting.age,
        size=formatting.size,
        count=formatting.count,
        ratio=formatting.ratio,
    )
    env.globals.update(
        legend=LEGEND,
        idle_minutes=IDLE_AFTER_S // 60,
        window=WINDOW,
        recent_commits=RECENT_COMMITS,
        latest_dead_letters=LATEST_DEAD_LETTERS,
    )
    return Jinja2Templates(env=env)


class _Pages:
    """The endpoints, sharing one catalog, one cache and one lock (catalog reads are made
    one at a time: a local page has one reader, and the catalog's connection is not shared
    across threads)."""

    def __init__(self, catalog: Catalog, cache: MetadataCache) -> None:
        self.catalog = catalog
        self.cache = cache
        self.templates = _templates()
        self.lock = threading.Lock()

    def overview(self, request: Request) -> Response:
        now = datetime.now(UTC)
        with self.lock:
            tables = overview(self.catalog, self.cache, now)
        return self._page(request, "overview.html", tables=tables, now=now)

    def table(self, request: Request) -> Response:
        now = datetime.now(UTC)
        with self.lock:
            table = self._readable(request)
            page = table_page(table, self.cache, now)
        return self._page(request, "table.html", page=page, now=now)

    def commits_chart(self, request: Request) -> Response:
        with self.lock:
            table = self._readable(request)
            svg = self.cache.get(
                table, "commits.svg", lambda: charts.commits_svg(self.cache.rows(table, "history"))
            )
        return Response(svg, media_type="image/svg+xml")

    def partitions_chart(self, request: Request) -> Response:
        with self.lock:
            table = self._readable(request)
            svg = self.cache.get(
                table,
                "partitions.svg",
                lambda: charts.partitions_svg(
                    self.cache.rows(table, "partitions"), table.spec.partition_by
                ),
            )
        return Response(svg, media_type="image/svg+xml")

    def warm_up(self) -> None:
        """Compute the ``partitions`` rows of each readable table whose commits left no
        current summary of them (the overview reads the others' from the catalog), one
        table at a time (requests go between them)."""
        with self.lock:
            found = catalog_overview(self.catalog)
        for facts in found:
            if facts.partitions is not None:
                continue
            with self.lock:
                try:
                    self.cache.rows(Table(self.catalog, facts.info), "partitions")
                except (NotFoundError, PermissionDeniedError):
                    continue
                except CatalogUnavailableError:
                    return  # the pages compute what they need when it is back

    def error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            name = request.path_params.get("name")
            return self._page(request, "not_found.html", name=name, status_code=404)
        return Response(exc.detail, status_code=exc.status_code, headers=exc.headers)

    def unavailable(self, request: Request, exc: Exception) -> Response:
        """The catalog could not be reached: a page saying so that reloads itself, and
        one line on stderr (uvicorn would print the traceback of each request)."""
        print(f"versioned ui: {request.url.path}: {exc}", file=sys.stderr, flush=True)
        return self._page(
            request,
            "unavailable.html",
            reason=str(exc),
            retry_s=RETRY_S,
            now=datetime.now(UTC),
            status_code=503,
            headers={"Retry-After": str(RETRY_S)},
        )

    def _readable(self, request: Request) -> Table:
        """The table the path names, checked for ``read``; 404 when it does not exist or
        the user may not read it (the same answer for both)."""
        try:
            return self.catalog.table(request.path_params["name"], need="read")
        except (NotFoundError, PermissionDeniedError, InvalidNameError):
            raise HTTPException(404) from None

    def _page(
        self,
        request: Request,
        template: str,
        *,
        status_code: int = 200,
        headers: dict[str, str] | None = None,
        **context: Any,
    ) -> Response:
        context.update(user=self.catalog.user, warehouse=self.catalog.settings.warehouse)
        return self.templates.TemplateResponse(
            request, template, context, status_code=status_code, headers=headers
        )


class _Headers:
    """Adds `HEADERS` to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.lower().encode(), v.encode()) for k, v in HEADERS.items()]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)
