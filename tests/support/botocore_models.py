"""The test processes' botocore sessions share the service models they have read.

botocore reads a service's model (its JSON files: ``service-2``, ``endpoint-rule-set-1``, the
partitions...) through the session's ``Loader`` and keeps it in that loader's cache, so every client
of one session reuses it. moto's ``mock_aws`` starts each test with no default boto3 session
(``boto3.DEFAULT_SESSION`` patched to None), so each test's first client of a service makes a new
session, a new loader, and decodes the same files again: about seven services a test in the handlers'
unit tests, a few milliseconds each, over thousands of tests.

Installed by the tests' ``pytest_configure``, this gives the loaders botocore's session makes one
cache per search path: a file is decoded once per process, and a session gets the same data it would
have read, as the clients of one session already share it. Sessions whose loaders search different
paths (boto3 adds its own ``data`` directory to its sessions' loaders) keep apart caches. Nothing
else changes: each session still has its own loader, credentials, config and event handlers.

Measured on the 2-core machine, one process: ``tests/functions/test_task_store.py``,
``test_email_worker.py`` and ``test_scraper.py`` took 19.1 s of CPU, 11.6 s with this; all of
``tests/functions`` (1,287 tests) 156.7 s, 77.8 s with this and ``moto_transactions``.
"""

from __future__ import annotations

import functools
from typing import Any

_CACHES: dict[tuple[str, ...], dict[Any, Any]] = {}
_PATCHED = "__outreach_shared_models__"


def install() -> None:
    """Make ``botocore.session`` create loaders with the shared caches (idempotent)."""
    from botocore import loaders, session

    if getattr(session.create_loader, _PATCHED, False):
        return

    class SharedCacheLoader(loaders.Loader):
        @property
        def _cache(self) -> dict[Any, Any]:
            return _CACHES.setdefault(tuple(self.search_paths), {})

        @_cache.setter
        def _cache(self, value: dict[Any, Any]) -> None:
            """Loader.__init__ sets an empty cache: the shared one stands instead."""

    original = session.create_loader

    @functools.wraps(original)
    def create_loader(search_path_string: str | None = None) -> loaders.Loader:
        loader = original(search_path_string)
        loader.__class__ = SharedCacheLoader
        return loader

    setattr(create_loader, _PATCHED, True)
    session.create_loader = create_loader
