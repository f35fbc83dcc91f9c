"""One result per for_each key: a node checkov could not expand is reported as ``<address>["<key>"]``.

checkov keeps one graph node for a resource whose ``for_each`` it cannot evaluate (a map built from
``flatten(...)`` locals, a map of pipes or mappings passed to a module) and makes one record per node
and check: ``Runner.run_block`` builds the record from the check's result and ``details`` right after
scanning the node and files it with ``Report.add_record``. A rule that judged the node's entries one
by one leaves its verdict for each key here; the wrapped ``add_record`` files one record per judged
key in place of the node's record, as an apply would create the instances. Records of every other
check, and of a node whose entries are unknown, pass unchanged. Installed once, when checkov loads
the policies.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from checkov.common.models.enums import CheckResult
from checkov.common.output.report import Report

_MARK = "_outreach_keyed_results"
_PENDING = "_outreach_keyed_results_pending"


@dataclass(frozen=True)
class KeyVerdict:
    """A rule's verdict on one for_each key."""

    key: str
    result: CheckResult
    details: tuple[str, ...]


def _pending() -> dict[str, tuple[str, tuple[KeyVerdict, ...]]]:
    """The keyed verdicts of the node each check scanned last, by check id: (node address, verdicts).

    checkov executes every file of the policies folder as a fresh module, so this file may run more
    than once; the one table lives on the class all copies wrap.
    """
    table = getattr(Report, _PENDING, None)
    if not isinstance(table, dict):
        table = {}
        setattr(Report, _PENDING, table)
    return table


def leave(check_id: str, address: str, verdicts: tuple[KeyVerdict, ...]) -> None:
    """The verdicts per key of the node at ``address``, filed in place of the node's own record."""
    _pending()[check_id] = (address, verdicts)


def clear(check_id: str) -> None:
    """The node a check scanned last is reported as one resource."""
    _pending().pop(check_id, None)


def keyed_address(address: str, key: str) -> str:
    """``aws_pipes_pipe.this`` and ``a`` give ``aws_pipes_pipe.this["a"]``, Terraform's instance name."""
    return f'{address}["{key}"]'


def _split(add_record: Callable[[Report, Any], None]) -> Callable[[Report, Any], None]:
    def add_record_per_key(report: Report, record: Any) -> None:
        pending = _pending().pop(str(getattr(record, "check_id", "")), None)
        result = record.check_result.get("result") if isinstance(record.check_result, dict) else None
        judged = result in (CheckResult.PASSED, CheckResult.FAILED)
        if pending is None or pending[0] != record.resource or not judged:
            add_record(report, record)
            return
        for verdict in pending[1]:
            keyed = copy.copy(record)
            keyed.resource = keyed_address(record.resource, verdict.key)
            if getattr(record, "resource_address", None) == record.resource:
                keyed.resource_address = keyed.resource
            keyed.check_result = {**record.check_result, "result": verdict.result}
            keyed.details = list(verdict.details)
            add_record(report, keyed)

    setattr(add_record_per_key, _MARK, True)
    return add_record_per_key


def install() -> None:
    """Wrap ``Report.add_record`` once per process."""
    if not getattr(Report.add_record, _MARK, False):
        setattr(Report, "add_record", _split(Report.add_record))  # noqa: B010 - a method replaced in place
