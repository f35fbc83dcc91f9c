"""Which tests must share one pytest-xdist worker: those that share a fixture built once per scope.

``make pytest`` runs the suite on several workers with ``--dist loadgroup``: a test without an
``xdist_group`` mark goes to any worker, and all tests of one group go, as one unit, to one worker.
A fixture of module, package or class scope is built once per scope *in each worker that runs one of
its tests*, so tests that share one (the e2e stack, an applied root, the packages built twice) are
grouped by that scope's node: the fixture is built once, as in a serial run, and its tests run one
after another in one process, as moto's process-global state needs.

A session fixture is built once per worker. The costly ones are named in ``SHARED_SESSION_FIXTURES``
and their tests grouped by fixture; the cheap ones in ``PER_WORKER_SESSION_FIXTURES`` are built in
each worker. A session fixture in neither set fails the collection, so that a new one is classified
on purpose rather than silently built once per worker.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from _pytest.nodeid import NodeId

# Costly session fixtures: every test using one runs on the same worker, which builds it once.
SHARED_SESSION_FIXTURES = frozenset(
    {
        # tests/iam: every handler's recorded calls and a Terraform plan of prod (the handlers' unit
        # tests join its group: tests/iam/session_recording.py).
        "evidence",
        # tests/policies: one checkov run over every rule's fixture folder.
        "fixture_report",
    }
)
# Cheap session fixtures, built in each worker that needs one.
PER_WORKER_SESSION_FIXTURES = frozenset(
    {
        # tests/embedded_aws: a moto server on a free port, reset before each test.
        "endpoint",
        # tests/outreach_operator/cli: moto's behaviour patches, applied in-process.
        "embedded_aws_behaviour",
        # tests/functions/scraping: a self-signed certificate authority in a temporary directory.
        "authority",
        # pytest's and pytest-xdist's own.
        "tmp_path_factory",
        "tmpdir_factory",
        "worker_id",
        "testrun_uid",
        "record_testsuite_property",
        "cache",
        "pytestconfig",
        "doctest_namespace",
    }
)
_NODE_SCOPES: dict[str, type[pytest.Item] | type[pytest.Collector]] = {
    "module": pytest.Module,
    "class": pytest.Class,
}


def session_group(fixture: str) -> str:
    """The group of the tests that share the costly session fixture ``fixture``."""
    return f"session:{fixture}"


def group_of(item: pytest.Item) -> str | None:
    """The group ``item`` must run in, or None when any worker may run it alone.

    The widest shared fixture decides: a costly session fixture, else the package, module or class
    whose scoped fixture the test uses.
    """
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    package: str | None = None
    scopes: set[str] = set()
    shared: list[str] = []
    for name, definitions in sorted(info.name2fixturedefs.items()):
        scope = definitions[-1].scope
        if scope == "session":
            if name in SHARED_SESSION_FIXTURES:
                shared.append(name)
            elif name not in PER_WORKER_SESSION_FIXTURES:
                raise pytest.UsageError(
                    f"session fixture {name!r} (used by {item.nodeid}) is not classified in "
                    "tests/support/worker_groups.py: add it to SHARED_SESSION_FIXTURES if it is costly "
                    "to build, else to PER_WORKER_SESSION_FIXTURES"
                )
        elif scope == "package":
            # A package fixture lives as long as the package whose conftest defines it.
            package = definitions[-1].baseid or "package:"
        elif scope in _NODE_SCOPES:
            scopes.add(scope)
    if shared:
        return session_group(shared[0])
    if package is not None:
        return package
    for scope in ("module", "class"):
        node = item.getparent(_NODE_SCOPES[scope]) if scope in scopes else None
        if node is not None:
            return node.nodeid
    return None


def assign(items: Iterable[pytest.Item]) -> None:
    """Mark every item that shares a scoped fixture with its group (``xdist_group``)."""
    for item in items:
        group = group_of(item)
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))


def label(items: Iterable[pytest.Item]) -> None:
    """Give each grouped item the ``<nodeid>@<group>`` id that ``--dist loadgroup`` schedules by.

    pytest-xdist's worker appends the suffix by assigning ``item._nodeid``; pytest 9 keeps the id in
    ``item._id`` (a ``NodeId``), so that assignment changes nothing and every test would be scheduled
    alone, each worker then building the shared fixtures again. Run after xdist's own hook, this sets
    the suffix where xdist's did not take; it changes nothing where it did.
    """
    for item in items:
        names = sorted(
            {
                str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                for m in item.iter_markers("xdist_group")
            }
        )
        if not names:
            continue
        suffix = f"@{'_'.join(names)}"
        if item.nodeid.endswith(suffix) or not isinstance(getattr(item, "_id", None), NodeId):
            continue
        item._id = NodeId.parse(item.nodeid + suffix)
