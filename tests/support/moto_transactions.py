"""moto's TransactWriteItems in the test processes: one backup copy of a table per transaction.

Before it applies a transaction, moto (``DynamoDBBackend.transact_write_items``) keeps a backup of
every table the transaction names, to put back if an action fails: it deep-copies the table once for
*every action* that names it, each copy replacing the one before, so a transaction of 100 actions on
one table copies the whole table 100 times. The copies are all taken before the first action is
applied, from the same unchanged table, so they are equal; moto keeps the last.

Installed by the tests' ``pytest_configure``, this hands out the first copy of a table for the
others of that same backup loop: each table is copied once per transaction, and moto's code, its
checks, its rollback and its errors are unchanged. Only ``Table`` objects are shared, and only within
one call of ``transact_write_items`` on one thread; moto's other copies (an item before an update, a
query's results) are made as before. The embedded AWS replaces ``transact_write_items`` with its own
(``embedded_aws.dynamodb_transactions``), which copies nothing; this wrapper then goes with moto's.

Measured on the 2-core machine, ``tests/functions/test_task_store.py``, ``test_email_worker.py`` and
``test_scraper.py`` (jobs' tasks created in transactions of up to 100 actions): 11.6 s of CPU with the
shared service models (``botocore_models``), 8.9 s with this too.
"""

from __future__ import annotations

import copy
import functools
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

_PATCHED = "__outreach_one_backup_per_table__"


class _OneCopyPerTable(ModuleType):
    """``copy`` as moto's DynamoDB models see it: ``deepcopy`` of a ``Table`` inside a transaction's
    call returns that call's first copy of the table; everything else is the ``copy`` module's."""

    def __init__(self, table_type: type) -> None:
        super().__init__("copy")
        self._table_type = table_type
        self._calls = threading.local()

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)

    def deepcopy(self, value: Any, memo: dict[int, Any] | None = None) -> Any:
        backups: dict[int, Any] | None = getattr(self._calls, "backups", None)
        if backups is None or memo is not None or not isinstance(value, self._table_type):
            return copy.deepcopy(value, memo)
        if id(value) not in backups:
            backups[id(value)] = copy.deepcopy(value)
        return backups[id(value)]

    def transaction(self, transact_write_items: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(transact_write_items)
        def one_copy_per_table(backend: Any, transact_items: list[dict[str, Any]]) -> Any:
            outer = getattr(self._calls, "backups", None)
            self._calls.backups = {}
            try:
                return transact_write_items(backend, transact_items)
            finally:
                self._calls.backups = outer

        setattr(one_copy_per_table, _PATCHED, True)
        return one_copy_per_table


def install() -> None:
    """Wrap moto's ``transact_write_items`` (idempotent; nothing to do once it is replaced)."""
    from moto.dynamodb import models
    from moto.dynamodb.models.table import Table

    backend = models.DynamoDBBackend
    if getattr(backend.transact_write_items, _PATCHED, False) or vars(models)["copy"] is not copy:
        return
    if backend.transact_write_items.__module__ != models.__name__:
        return  # already replaced (the embedded AWS's own transactions copy nothing)
    shim = _OneCopyPerTable(Table)
    vars(models)["copy"] = shim
    backend.transact_write_items = shim.transaction(backend.transact_write_items)  # type: ignore[method-assign]
