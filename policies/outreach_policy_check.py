"""The base of every CKV_OUT_* check: one resource in, a verdict out that fails closed.

checkov loads every ``.py`` file of an ``--external-checks-dir`` folder as a module named after the
file and puts the folder on ``sys.path``, so the checks import their helpers by plain name. This
module defines no ``check`` object of its own.
"""

from __future__ import annotations

import copy
from abc import abstractmethod
from collections.abc import Iterable
from typing import Any

from checkov.common.models.enums import CheckCategories, CheckResult
from checkov.terraform.checks.resource.base_resource_check import BaseResourceCheck
from outreach_policy_evaluation import effective_conf, flag_unset_variables
from outreach_policy_graph import GraphView
from outreach_policy_instances import ForEachEntry, InstanceReader, Reference, RenderedBlock
from outreach_policy_keyed_results import KeyVerdict, clear, install, leave
from outreach_policy_values import Problems, assign, remove

install()  # checkov loads this module with the policies: report for_each keys one by one


class _Both(Problems):
    """Problems recorded twice: for the key's own result and, prefixed with the key, for the node's."""

    def __init__(self, own: Problems, prefixed: Problems) -> None:
        super().__init__()
        self._own, self._prefixed = own, prefixed

    def add(self, line: str) -> None:
        super().add(line)
        self._own.add(line)
        self._prefixed.add(line)

    def unresolved(self, attribute: str, raw: Any) -> None:
        self.lines.append(attribute)
        self._own.unresolved(attribute, raw)
        self._prefixed.unresolved(attribute, raw)


class GraphViews:
    """The view of the graph being scanned and its instances, built once and shared by all checks of a run."""

    def __init__(self) -> None:
        self._current: GraphView | None = None
        self.instances: InstanceReader | None = None

    def of(self, graph: Any) -> GraphView | None:
        if graph is None or not hasattr(graph, "node_indices") or not hasattr(graph, "out_edges"):
            return None
        if self._current is None or self._current.graph is not graph:
            view = GraphView(graph)
            reader = InstanceReader(view)
            view.exists = reader.exists
            view.entry_references = reader.references
            view.entry_keys = reader.keys
            view.prune = reader.prune
            self._current, self.instances = view, reader
        return self._current


class OutreachCheck(BaseResourceCheck):
    """Base for the CKV_OUT_* checks: fail closed on unresolved values and on internal errors.

    checkov turns an exception raised by a check into an UNKNOWN result that is left out of the
    report, which would let a broken rule pass silently; here it becomes a FAILED result instead.
    """

    views = GraphViews()

    def __init__(self, *, name: str, id: str, supported_resources: Iterable[str]) -> None:
        super().__init__(
            name=name,
            id=id,
            categories=(CheckCategories.GENERAL_SECURITY,),
            supported_resources=tuple(supported_resources),
        )

    # Attribute paths of the checked resource whose values the rule reads; an unset variable behind
    # any of them fails the rule even where checkov rendered a placeholder such as [].
    inputs: tuple[str, ...] = ()

    view: GraphView | None = None
    node: int | None = None
    # The for_each entry being judged, when the resource's entries are known.
    entry: ForEachEntry | None = None

    def scan_resource_conf(self, conf: dict[str, list[Any]]) -> CheckResult:
        problems = Problems()
        clear(self.id)
        try:
            self.view = self.views.of(self.graph)
            self.node = self.view.node_of(conf) if self.view is not None else None
            entries: list[ForEachEntry] | None = None
            if self.view is not None and self.node is not None:
                conf = effective_conf(self.view, self.node, conf, self.inputs)
                if self.views.instances is not None:
                    self.views.instances.prune(self.node, conf)
                    entries = self.views.instances.entries(self.node)
                    if entries == []:
                        return CheckResult.UNKNOWN  # count or for_each yields no instance
            verdicts: dict[str, Problems | None] = {}
            if entries and self.view is not None and self.node is not None:
                applicable = self._evaluate_entries(self.view, self.node, conf, entries, problems, verdicts)
            else:
                applicable = self.evaluate(conf, problems)
            if applicable and self.view is not None and self.node is not None:
                node_problems = Problems()
                flag_unset_variables(self.view, self.node, self.inputs, node_problems)
                for line in node_problems.lines:
                    problems.add(line)
                    for judged in verdicts.values():
                        if judged is not None:
                            judged.add(line)
        except Exception as error:  # noqa: BLE001 - a broken rule must fail the scan, not vanish from it
            clear(self.id)
            self.details = [f"policy error in {self.id}: {type(error).__name__}: {error}"]
            return CheckResult.FAILED
        self._leave_keyed(conf, verdicts)
        if not applicable and not problems:
            return CheckResult.UNKNOWN
        why = (
            self.views.instances.unknown(self.node)
            if self.views.instances and self.node is not None
            else None
        )
        if problems and why is not None:
            # The resource was judged as one, as checkov rendered it: say which expression decided that.
            problems.add(f"instances unknown, judged as one resource: {why}")
        self.details = list(problems.lines)
        return CheckResult.FAILED if problems else CheckResult.PASSED

    def _leave_keyed(self, conf: dict[str, Any], verdicts: dict[str, Problems | None]) -> None:
        """File the node's result per for_each key (``resource["key"]``) when its entries were judged."""
        judged = {key: found for key, found in verdicts.items() if found is not None}
        if not judged:
            clear(self.id)
            return
        leave(
            self.id,
            str(conf.get("__address__", "")),
            tuple(
                KeyVerdict(key, CheckResult.FAILED if found else CheckResult.PASSED, tuple(found.lines))
                for key, found in judged.items()
            ),
        )

    def _evaluate_entries(
        self,
        view: GraphView,
        node: int,
        conf: dict[str, Any],
        entries: list[ForEachEntry],
        problems: Problems,
        verdicts: dict[str, Problems | None],
    ) -> bool:
        """Judge each for_each entry with its own values; the rule applies when it applies to one.

        ``verdicts`` receives each key's own problems (``None`` where the rule does not apply to it);
        ``problems`` receives them all, each line prefixed with its key.

        An entry's reference is pinned as the node's edge for that attribute while the entry is
        judged, and rendered as ``<type>.<name>.arn`` of the block it reaches (its text when it
        reaches none or several).
        """
        applicable = False
        for entry in entries:
            entry_conf = copy.deepcopy(conf)
            pins: dict[tuple[int, str], list[int]] = {}
            # Rendered blocks first: the references inside them are then pinned like any other.
            ordered = sorted(entry.values.items(), key=lambda item: not isinstance(item[1], RenderedBlock))
            for path, entry_value in ordered:
                if isinstance(entry_value, RenderedBlock):
                    if entry_value.blocks:
                        entry_conf[path] = copy.deepcopy(list(entry_value.blocks))
                    else:
                        entry_conf.pop(path, None)
                elif isinstance(entry_value, Reference):
                    pins[(node, path)] = list(entry_value.nodes)
                    nodes = entry_value.nodes
                    rendered = (
                        f"{view.attrs(nodes[0]).get('id_')}.arn" if len(nodes) == 1 else entry_value.text
                    )
                    assign(entry_conf, path.split("."), rendered)
                elif entry_value is None:
                    remove(entry_conf, path.split("."))
                else:
                    assign(entry_conf, path.split("."), entry_value)
            view.pinned, self.entry = pins, entry
            own = Problems()
            try:
                entry_applies = self.evaluate(entry_conf, _Both(own, problems.child(f'["{entry.key}"]')))
            finally:
                view.pinned, self.entry = {}, None
            verdicts[entry.key] = own if entry_applies or own else None
            applicable = entry_applies or applicable
        return applicable

    def require_graph(self, problems: Problems) -> tuple[GraphView, int] | None:
        """The graph and this resource's node, or a recorded problem when either is missing."""
        if self.view is None:
            problems.add(
                "checkov's resource graph is unavailable (run checkov with its default rustworkx graph "
                "framework); the cross-resource rule fails closed"
            )
            return None
        if self.node is None:
            problems.add("the resource was not found in checkov's resource graph; the rule fails closed")
            return None
        return self.view, self.node

    @abstractmethod
    def evaluate(self, conf: dict[str, Any], problems: Problems) -> bool:
        """Record each violated requirement in ``problems``; return False when the rule does not apply."""
