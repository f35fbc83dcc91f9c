"""A read that projects top-level attributes costs its projection: picked, copied and sized once.

moto projects a read's item (``Item.project``: GetItem, Query, Scan with a ``ProjectionExpression``)
by converting the whole item to plain Python values once for every name in the projection, finding
the name in that copy, then serialising what it found back to attribute values. Before that, its
Query deep-copies every item of the page whole, and sizes each candidate item twice (the 1 MB page
limit: once to test it, once to add it up). The ``campaign cancel`` of 7,200 emails, which asks the
``campaign-open`` index for twelve fields of each, spent more on its projection than on reading the
whole rows, and most of its read on copies of attributes it then dropped.

DynamoDB returns, for a projection of top-level attribute names, exactly the item's attributes of
those names, each whole, and leaves out a name the item lacks; the 1 MB of a Query page is measured
on the items read, before any projection
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ProjectionExpressions.html,
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.Pagination.html). Here:

- a projection whose every path is one top-level name picks those attributes from the item (each
  value copied);
- a Query with such a projection and no filter copies of each item only the projected attributes,
  once (the filter, when there is one, needs the whole item: moto's copy is kept), and sizes each
  candidate item once, on the stored item, as before.

The items, pages, ``LastEvaluatedKey`` and ``ScannedCount`` are moto's. A projection of any nested
path (``a.b``, ``a[0]``) is moto's, unchanged.
"""

from __future__ import annotations

import copy
import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any

_PATCHED = "__outreach_top_level_projection__"
# While a projected Query runs on this thread: the names it returns, and each item's size by id.
_QUERY = threading.local()
# moto's own methods, by name, as they were before the install (for the tests to compare with).
ORIGINAL: dict[str, Callable[..., Any]] = {}


def _top_level(projection_expressions: list[list[str]] | None) -> list[str] | None:
    """The names of a projection of top-level attributes only; None when any path goes deeper."""
    if not projection_expressions:
        return None
    names = []
    for path in projection_expressions:
        if len(path) != 1 or "[" in path[0]:
            return None
        names.append(path[0])
    return names


def _picked(item: Any, names: list[str], memo: dict[int, Any] | None = None) -> Any:
    """A new item of ``item``'s keys and of its attributes among ``names``, each value copied."""
    kind: Any = type(item)
    projected = kind.__new__(kind)
    projected.hash_key = copy.deepcopy(item.hash_key, memo)
    projected.range_key = copy.deepcopy(item.range_key, memo)
    attrs_kind: Any = type(item.attrs)
    projected.attrs = attrs_kind.__new__(attrs_kind)
    dict.__init__(projected.attrs)
    for name in names:
        if name in item.attrs:
            dict.__setitem__(projected.attrs, name, copy.deepcopy(item.attrs[name], memo))
    return projected


def _project(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def project(self: Any, projection_expressions: list[list[str]]) -> Any:
        names = _top_level(projection_expressions)
        return original(self, projection_expressions) if names is None else _picked(self, names)

    setattr(project, _PATCHED, True)
    return project


def _deepcopy(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def deepcopy(self: Any, memo: dict[int, Any]) -> Any:
        names = getattr(_QUERY, "names", None)
        return original(self, memo) if names is None else _picked(self, names, memo)

    return deepcopy


def _size(original: Callable[[Any], int]) -> Callable[[Any], int]:
    @functools.wraps(original)
    def size(self: Any) -> int:
        sizes = getattr(_QUERY, "sizes", None)
        if sizes is None:
            return original(self)
        if id(self) not in sizes:
            sizes[id(self)] = original(self)
        return int(sizes[id(self)])

    return size


def _unfiltered(condition: Any) -> bool:
    """Whether a Query's filter keeps every item: none given (moto's ``OpDefault`` for no text)."""
    from moto.dynamodb.comparisons import OpDefault

    return condition is None or type(condition) is OpDefault


def _query(original: Callable[..., Any]) -> Callable[..., Any]:
    signature = inspect.signature(original)

    @functools.wraps(original)
    def query(self: Any, *args: Any, **kwargs: Any) -> Any:
        call = signature.bind(self, *args, **kwargs).arguments
        names = _top_level(call.get("projection_expressions"))
        if names is None or not _unfiltered(call.get("filter_expression")) or hasattr(_QUERY, "names"):
            return original(self, *args, **kwargs)
        bound = signature.bind(self, *args, **kwargs)
        bound.arguments["projection_expressions"] = None  # each copy is projected already
        _QUERY.names, _QUERY.sizes = names, {}
        try:
            return original(*bound.args, **bound.kwargs)
        finally:
            del _QUERY.names, _QUERY.sizes

    setattr(query, _PATCHED, True)
    return query


def project_top_level_names_directly() -> None:
    """Make moto's projections of top-level names, and its Queries with one, cost the projection
    (idempotent)."""
    from moto.dynamodb.models.dynamo_type import Item
    from moto.dynamodb.models.table import Table

    if getattr(Item.project, _PATCHED, False):
        return
    ORIGINAL.update(project=Item.project, deepcopy=Item.__deepcopy__, size=Item.size, query=Table.query)
    Item.project = _project(Item.project)  # type: ignore[method-assign]
    Item.__deepcopy__ = _deepcopy(Item.__deepcopy__)  # type: ignore[method-assign]
    Item.size = _size(Item.size)  # type: ignore[method-assign,assignment]
    Table.query = _query(Table.query)  # type: ignore[method-assign]
