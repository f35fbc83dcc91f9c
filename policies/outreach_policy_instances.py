"""Which instances of a resource exist and what each for_each entry sets: rules judge instances, not nodes.

checkov keeps one graph node for a resource whose ``count`` or ``for_each`` it could not expand:
``count = var.create ? 1 : 0`` in a module called with ``create = false``, ``for_each = { for k, v in
var.mappings : k => v if local.create }``, or a map of mappings whose entries are read with
``try(each.value.event_source_arn, null)``. ``InstanceReader`` evaluates those expressions from the
source with the values checkov rendered for the variables and locals of the module instance: a
resource with zero instances is not judged, and each known entry is judged with its own values,
blocks (``outreach_policy_entry_blocks``) and references, and reported as its own key. What cannot
be evaluated is left to the rules, which fail closed on it; ``unknown`` says which expression that was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from outreach_policy_entry_blocks import render_blocks
from outreach_policy_evaluation import VariablePath, scope_of
from outreach_policy_expressions import Lazy, UnknownValueError, evaluate_expression, plain, rendered
from outreach_policy_graph import GraphView
from outreach_policy_source import parse_body, repeated_blocks
from outreach_policy_values import is_unresolved, reference_target

_EACH = "each."


@dataclass(frozen=True)
class Reference:
    """An entry's attribute that names other blocks: the graph nodes it reaches."""

    nodes: tuple[int, ...]
    text: str


@dataclass(frozen=True)
class RenderedBlock:
    """The blocks one entry gets under a name, in checkov's configuration shape (empty: none)."""

    blocks: tuple[dict[str, Any], ...]


@dataclass
class ForEachEntry:
    """One ``for_each`` entry: its key and the attributes (by path) whose value depends on it."""

    key: str
    values: dict[str, Any] = field(default_factory=dict)


class InstanceReader:
    """Instances of the resources of one graph, evaluated once per node."""

    def __init__(self, view: GraphView) -> None:
        self.view = view
        self._entries: dict[int, list[ForEachEntry] | None] = {}
        self._unknown: dict[int, str] = {}

    def exists(self, idx: int) -> bool:
        """False only when ``count``/``for_each`` is known to produce no instance."""
        return self.entries(idx) != []

    def entries(self, idx: int) -> list[ForEachEntry] | None:
        """The node's ``for_each`` entries; ``[]`` when it has no instance, ``None`` when not a known map."""
        if idx not in self._entries:
            self._entries[idx] = None  # a reference cycle reads the node as not expanded
            self._entries[idx] = self._read(idx)
        return self._entries[idx]

    def references(self, idx: int, attribute: str) -> list[int]:
        """Nodes that ``attribute`` reaches in any entry of the node (empty when not a known map)."""
        found: list[int] = []
        for entry in self.entries(idx) or []:
            for path, value in entry.values.items():
                if isinstance(value, Reference) and (path == attribute or path.startswith(attribute + ".")):
                    found.extend(value.nodes)
        return list(dict.fromkeys(found))

    def unknown(self, idx: int) -> str | None:
        """Why the node's instances are unknown: its ``count``/``for_each`` and what stopped it."""
        self.entries(idx)
        return self._unknown.get(idx)

    def keys(self, idx: int, attribute: str, target: int) -> list[str]:
        """Keys of the node's entries whose ``attribute`` reaches node ``target``."""
        return [
            entry.key
            for entry in self.entries(idx) or []
            if any(
                isinstance(value, Reference)
                and target in value.nodes
                and (path == attribute or path.startswith(attribute + "."))
                for path, value in entry.values.items()
            )
        ]

    def _read(self, idx: int) -> list[ForEachEntry] | None:
        count = self._meta(idx, "count")
        if count is not None:
            try:
                number = plain(evaluate_expression(count, self._scope(idx, None)))
            except UnknownValueError as error:
                self._unknown[idx] = f"count = {_short(count)} cannot be evaluated ({error})"
                return None
            return [] if number == 0 else None
        for_each = self._meta(idx, "for_each")
        if for_each is None:
            return None
        try:
            collection = evaluate_expression(for_each, self._scope(idx, None))
            items = plain(collection)
        except UnknownValueError as error:
            self._unknown[idx] = f"for_each = {_short(for_each)} cannot be evaluated ({error})"
            return None
        if isinstance(items, dict):
            keys = list(items)
            values = [collection.at(k) if isinstance(collection, Lazy) else items[k] for k in keys]
        elif isinstance(items, list) and all(isinstance(item, str) for item in items):
            keys, values = list(items), list(items)
        else:
            self._unknown[idx] = f"for_each = {_short(for_each)} is neither a map nor a set of strings"
            return None
        return [self._entry(idx, str(key), each_value) for key, each_value in zip(keys, values, strict=True)]

    def prune(self, idx: int, conf: dict[str, Any]) -> None:
        """Drop the ``dynamic`` blocks of ``conf`` whose ``for_each`` is known to generate nothing."""
        for name, generator in self._generators(idx).items():
            if _generates_nothing(generator, self._scope(idx, None)):
                conf.pop(name, None)

    def _generators(self, idx: int) -> dict[str, str]:
        """``for_each`` expressions of the node's top-level ``dynamic`` blocks, by block name."""
        body = self._body(idx)
        if body is None:
            return {}
        return {
            name: entry.for_each for name, entry in parse_body(body).items() if entry.for_each is not None
        }

    def _body(self, idx: int) -> str | None:
        attrs = self.view.attrs(idx)
        return self.view.sources.block_body(
            str(attrs.get("file_path_", "")), attrs.get("__start_line__"), attrs.get("__end_line__")
        )

    def _meta(self, idx: int, argument: str) -> str | None:
        located = self.view.locate(idx, [argument])
        return None if located is None or located.remaining else located.expression

    def _entry(self, idx: int, key: str, each_value: Any) -> ForEachEntry:
        entry = ForEachEntry(key)
        scope = self._scope(idx, (key, each_value))
        rendered_blocks = self._render_blocks(idx, scope, entry)
        for path in self._each_paths(idx):
            if path.split(".")[0] in rendered_blocks:
                continue
            located = self.view.locate(idx, path.split("."))
            if located is None or located.expression is None or located.remaining:
                continue
            try:
                result = evaluate_expression(located.expression, self._scope(idx, (key, each_value)))
            except UnknownValueError:
                continue
            entry.values[path] = self._settle(result)
        for name, generator in self._generators(idx).items():
            if name in rendered_blocks:
                continue
            if _EACH in generator and _generates_nothing(generator, self._scope(idx, (key, each_value))):
                entry.values = {p: v for p, v in entry.values.items() if not p.startswith(name + ".")}
                entry.values[name] = None
        return entry

    def _render_blocks(self, idx: int, scope: Any, entry: ForEachEntry) -> set[str]:
        """Render the node's top-level blocks that read ``each`` for this entry; the names rendered."""
        body = self._body(idx)
        if body is None:
            return set()
        rendered: set[str] = set()
        repeated = repeated_blocks(body)
        for name, item in parse_body(body).items():
            if item.kind != "block" or name in repeated or _EACH not in item.text + (item.for_each or ""):
                continue
            found: dict[str, Any] = {}
            try:
                block = render_blocks(
                    body,
                    name,
                    lambda text, bound: evaluate_expression(text, scope, bound),
                    self._settle,
                    lambda value: value.text if isinstance(value, Reference) else None,
                    found,
                )
            except UnknownValueError:
                continue  # a dynamic for_each that cannot be evaluated: checkov's rendering stays
            entry.values[name] = RenderedBlock(tuple(block))
            entry.values.update(found)
            rendered.add(name)
        return rendered

    def _each_paths(self, idx: int) -> list[str]:
        """Top-level and nested attribute paths of the node whose source expression reads ``each``."""
        body = self._body(idx)
        found: list[str] = []

        def walk(text: str, prefix: str) -> None:
            for name, entry in parse_body(text).items():
                if name in {"for_each", "count"}:
                    continue
                if entry.kind == "block":
                    walk(entry.text, f"{prefix}{name}.")
                elif _EACH in entry.text:
                    found.append(prefix + name)

        if body is not None:
            walk(body, "")
        return found

    def _settle(self, result: Any) -> Any:
        """A plain value, ``None``, or a ``Reference`` for a value that names other blocks."""
        value = rendered(result)
        if not _names_blocks(value):
            return value
        nodes: list[int] = []
        if isinstance(result, VariablePath):
            caller = self.view.caller(result.variable)
            nodes = self._referenced_by_caller(caller, result.label, str(value)) if caller is not None else []
        return Reference(tuple(nodes), str(value))

    def _referenced_by_caller(self, caller: int, label: str, text: str) -> list[int]:
        """Blocks the caller's argument at ``label`` names.

        checkov labels the edge of an argument built by an expression (a for-expression over a list
        of targets) with the argument's path only, so shorter paths are tried, keeping the block that
        the value's text names.
        """
        nodes = self.view.referenced(caller, label)
        target = reference_target(text)
        segments = label.split(".")
        for length in range(len(segments) - 1, 1, -1):
            if nodes or target is None:
                break
            wanted = f"{target[0]}.{target[1]}"
            found = self.view.referenced(caller, ".".join(segments[:length]))
            nodes = [node for node in found if self.view.attrs(node).get("id_") == wanted]
        return nodes

    def _scope(self, idx: int, each: tuple[str, Any] | None) -> Any:
        return scope_of(self.view, idx, each)


def _short(expression: str) -> str:
    """An expression on one line, cut to a length a report line can hold."""
    text = " ".join(expression.split())
    return text if len(text) <= 160 else text[:157] + "..."


def _generates_nothing(generator: str, scope: Any) -> bool:
    """Whether a ``dynamic`` block's ``for_each`` is known to be empty."""
    try:
        result = plain(evaluate_expression(generator, scope))
    except UnknownValueError:
        return False
    return result is None or result == [] or result == {}


def _names_blocks(value: Any) -> bool:
    """A rendered string that is a reference or an expression around one, not a literal."""
    if not isinstance(value, str) or value.startswith("arn:"):
        return False
    return is_unresolved(value) or reference_target(value) is not None or ("(" in value and "." in value)
