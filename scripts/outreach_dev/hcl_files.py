"""python-hcl2's ``load`` of one file, one thread at a time: its serializer shares mutable state.

python-hcl2 8.x serializes each rule with ``context=SerializationContext()`` as a default argument
(``hcl2/rules/abstract.py``): one instance made at import and shared by every call that passes none,
as ``hcl2.load`` does. ``SerializationContext.modify`` sets its flags (``inside_dollar_string``,
``inside_parentheses``) while a nested rule is serialized, so two threads serializing at once read
each other's flags, and a block can come back as a ``${...}`` string instead of a mapping.
``terraform_cli`` checks four directories at a time in threads, each reading its
``configuration_aliases``: one check read modules/outreach-pipeline's as none, validated the module
alone and failed ("missing provider ... .receiving"). Six threads loading that module's files three
times each gave 13 results that differ from a lone load. A file parses in milliseconds, so one lock
for every load costs nothing a run can see.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import hcl2

_LOCK = threading.Lock()


def load(path: Path, options: hcl2.SerializationOptions) -> dict[str, Any]:
    """``path`` (a .tf or .tfvars file) as python-hcl2 reads it with ``options``."""
    with path.open(encoding="utf-8") as handle, _LOCK:
        loaded: dict[str, Any] = hcl2.load(handle, serialization_options=options)
    return loaded
