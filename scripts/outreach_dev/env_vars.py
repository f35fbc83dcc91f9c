"""Environment variables set for the length of a block, and put back as they were afterwards."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

# The environment is one per process: blocks that change it run one at a time.
_LOCK = threading.RLock()


@contextmanager
def overridden(values: Mapping[str, str]) -> Iterator[None]:
    """Set ``values`` in ``os.environ`` inside the block; restore (or remove) each one after it.

    Used where a library reads the process environment itself: python-terraform runs terraform with
    it, and boto3 and the core's configuration read it when the task store is called in this process.
    """
    if not values:
        yield
        return
    with _LOCK:
        previous = {key: os.environ.get(key) for key in values}
        os.environ.update(values)
        try:
            yield
        finally:
            for key, value in previous.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
