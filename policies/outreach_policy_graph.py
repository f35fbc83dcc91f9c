"""Walking checkov's resource graph from an attribute to the blocks it references, across modules.

``self.graph`` (set on every check by checkov's registry) holds one node per block; edges carry
the attribute path that makes the reference and pass through ``variable``, ``module``, ``output``
and ``locals`` nodes. ``GraphView`` indexes the graph once and follows those edges in one
traversal, from which both the referenced resources and the unset variables on the way are read.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from checkov.terraform.parser_functions import handle_dynamic_values
from outreach_policy_source import Located, SourceFiles, locate
from outreach_policy_values import reference_target, value

_INDEX_SEGMENT = re.compile(r"\.\d+(?=\.|$)")

InstanceKey = tuple[str, str, Any]
# The key of a for_each or count module call in checkov's node name: worker["a"] or worker[0].
_OWN_KEY = re.compile(r'\[(?:"([^"]*)"|(\d+))\]$')


def _label_path(label: str) -> str:
    """An edge label as an attribute path: ``[cross-variable]`` marker and list indices removed."""
    return _INDEX_SEGMENT.sub("", label.removeprefix("[cross-variable] "))


def _label_matches(label: str, attribute: str) -> bool:
    path = _label_path(label)
    return path == attribute or path.startswith(attribute + ".")


def _edge_label(data: Any) -> str:
    return str(data.get("label", "") if isinstance(data, dict) else getattr(data, "label", ""))


def module_instance(raw: Any) -> InstanceKey | None:
    """``(call name, calling file, parent instance)`` of checkov's module-instance marker.

    checkov stores it as an object, a dict or JSON text depending on where it comes from.
    """
    if raw is None:
        return None
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return None
    if isinstance(raw, dict):
        name, path, nested = raw.get("name"), raw.get("path"), raw.get("nested_tf_module")
    else:
        name, path, nested = (getattr(raw, key, None) for key in ("name", "path", "nested_tf_module"))
    if isinstance(name, str) and isinstance(path, str):
        return name, path, module_instance(nested)
    return None


def _foreach_key(marker: Any) -> str | None:
    """The ``foreach_idx`` of checkov's module-instance marker, as text."""
    if isinstance(marker, str):
        try:
            marker = json.loads(marker)
        except ValueError:
            return None
    key = marker.get("foreach_idx") if isinstance(marker, dict) else getattr(marker, "foreach_idx", None)
    return None if key is None else str(key)


class GraphView:
    """Read-only view of checkov's rustworkx resource graph, with the source files it was built from."""

    def __init__(self, graph: Any) -> None:
        self.graph = graph
        self.sources = SourceFiles()
        self._by_conf: dict[int, int] = {}
        self.by_type: dict[str, list[int]] = {}
        self._by_block_type: dict[str, dict[str, list[int]]] = {}
        self._reached: dict[tuple[int, str], list[int]] = {}
        self._bodies: dict[int, str | None] = {}
        self._confs: dict[int, dict[str, Any]] = {}
        # Set by the instance reader: whether a node has any instance, the references of its
        # for_each entries, and the references of the one entry being judged.
        self.exists: Callable[[int], bool] = lambda _idx: True
        self.entry_references: Callable[[int, str], list[int]] = lambda _idx, _attribute: []
        self.entry_keys: Callable[[int, str, int], list[str]] = lambda _idx, _attribute, _target: []
        self.pinned: dict[tuple[int, str], list[int]] = {}
        self.prune: Callable[[int, dict[str, Any]], None] = lambda _idx, _conf: None
        for idx in graph.node_indices():
            attrs = self.attrs(idx)
            block_type = str(attrs.get("block_type_"))
            name = str(attrs.get("block_name_", ""))
            self._by_block_type.setdefault(block_type, {}).setdefault(name, []).append(idx)
            if block_type != "resource":
                continue
            self.by_type.setdefault(str(attrs.get("resource_type")), []).append(idx)
            config = attrs.get("config_")
            if isinstance(config, dict):
                for by_name in config.values():
                    if isinstance(by_name, dict):
                        for resource_conf in by_name.values():
                            self._by_conf[id(resource_conf)] = idx

    # ----- nodes -----

    def attrs(self, idx: int) -> dict[str, Any]:
        node = self.graph[idx]
        attrs = node[1] if isinstance(node, tuple) else node
        return attrs if isinstance(attrs, dict) else {}

    def block_type(self, idx: int) -> str:
        return str(self.attrs(idx).get("block_type_"))

    def conf(self, idx: int) -> dict[str, Any]:
        """The node's configuration in the form checks receive, ``dynamic`` blocks included.

        checkov merges rendered ``dynamic`` blocks into a resource's configuration only when one of
        the selected checks scans that resource; doing it here on a copy makes a rule's result
        independent of which other checks run.
        """
        if idx not in self._confs:
            handled = copy.deepcopy(self._raw_conf(idx))
            handle_dynamic_values(handled)
            self.prune(idx, handled)
            self._confs[idx] = handled
        return self._confs[idx]

    def _raw_conf(self, idx: int) -> dict[str, Any]:
        attrs = self.attrs(idx)
        config = attrs.get("config_")
        block_name = str(attrs.get("block_name_", ""))
        resource_type = str(attrs.get("resource_type", ""))
        if isinstance(config, dict):
            by_name = config.get(resource_type)
            if isinstance(by_name, dict):
                name = block_name.removeprefix(resource_type + ".")
                found = by_name.get(name)
                if isinstance(found, dict):
                    return found
                if len(by_name) == 1:
                    only = next(iter(by_name.values()))
                    if isinstance(only, dict):
                        return only
        return {}

    def address(self, idx: int) -> str:
        attrs = self.attrs(idx)
        return str(attrs.get("__address__") or attrs.get("block_name_") or idx)

    def node_of(self, conf: dict[str, Any]) -> int | None:
        """The graph node of the resource whose configuration checkov passed to the check."""
        idx = self._by_conf.get(id(conf))
        if idx is not None:
            return idx
        address = conf.get("__address__")
        matches = [
            i
            for indices in self.by_type.values()
            for i in indices
            if self.attrs(i).get("__address__") == address and self.conf(i) == conf
        ]
        return matches[0] if len(matches) == 1 else None

    def instance(self, idx: int) -> tuple[str, str]:
        """The module instance a node belongs to: its folder and checkov's instance marker."""
        attrs = self.attrs(idx)
        return os.path.dirname(str(attrs.get("file_path_", ""))), str(attrs.get("source_module_object_"))

    def blocks(self, block_type: str, name: str) -> list[int]:
        """Nodes of a block type (``variable``, ``output``, ...) with this name, in every instance."""
        return self._by_block_type.get(block_type, {}).get(name, [])

    # ----- source text -----

    def locate(self, idx: int, path: Sequence[str]) -> Located | None:
        """Where ``path`` leads inside the node's source block (``None`` when the block is unreadable)."""
        if idx not in self._bodies:
            attrs = self.attrs(idx)
            self._bodies[idx] = self.sources.block_body(
                str(attrs.get("file_path_", "")), attrs.get("__start_line__"), attrs.get("__end_line__")
            )
        body = self._bodies[idx]
        return None if body is None else locate(body, list(path))

    # ----- edges -----

    def _edges(self, idx: int) -> list[tuple[int, str]]:
        return [(int(target), _edge_label(data)) for _source, target, data in self.graph.out_edges(idx)]

    def _out(self, idx: int) -> list[tuple[int, str]]:
        edges: list[tuple[int, str]] = []
        for target, label in self._edges(idx):
            if self.block_type(target) == "output":
                edges.extend((output, label) for output in self._module_output_instances(idx, target, label))
            else:
                edges.append((target, label))
        return edges

    def _module_output_instances(self, source: int, output: int, label: str) -> list[int]:
        """The output node(s) of the module instance that ``source`` really names.

        checkov links ``module.<name>.<output>`` to the first output of that name whose module was
        called from the same file, and ``module.<name>[each.key].<output>`` to the first instance of
        a ``for_each`` call, so the edge may point at the wrong instance. The call name and instance
        key are read back from the source text of the referencing attribute.
        """
        output_attrs = self.attrs(output)
        output_name = str(output_attrs.get("block_name_", ""))
        located = self.locate(source, _label_path(label).split("."))
        if located is None or located.expression is None:
            return [output]
        reference = re.compile(rf"\bmodule\.([A-Za-z_][\w-]*)(\[[^\]]*\])?\.{re.escape(output_name)}\b")
        found = reference.findall(located.expression)
        if not found:
            return [output]
        names = {name for name, _index in found}
        keys = {self._instance_key(source, index) for _name, index in found}
        source_attrs = self.attrs(source)
        source_dir = os.path.dirname(str(source_attrs.get("file_path_", "")))
        source_instance = module_instance(source_attrs.get("source_module_object_"))
        output_dir = os.path.dirname(str(output_attrs.get("file_path_", "")))
        matches = []
        for candidate in self.blocks("output", output_name):
            attrs = self.attrs(candidate)
            marker = attrs.get("source_module_object_")
            instance = module_instance(marker)
            if (
                instance is not None
                and instance[0] in names
                and os.path.dirname(instance[1]) == source_dir
                and instance[2] == source_instance
                and os.path.dirname(str(attrs.get("file_path_", ""))) == output_dir
                and (None in keys or _foreach_key(marker) in keys)
            ):
                matches.append(candidate)
        return matches or [output]

    def instance_key(self, idx: int) -> str | None:
        """The key of a ``for_each``/``count`` module call node (``worker["a"]`` gives ``a``)."""
        own = _OWN_KEY.search(str(self.attrs(idx).get("block_name_", "")))
        return None if own is None else own.group(1) or own.group(2)

    def _instance_key(self, source: int, index: str) -> str | None:
        """The instance key an index such as ``[each.key]``, ``["a"]`` or ``[0]`` selects (``None``: any)."""
        inner = index.strip("[] ")
        if not inner:
            return None
        if inner == "each.key":
            return self.instance_key(source)
        quoted = re.fullmatch(r'"([^"]*)"', inner)
        if quoted is not None:
            return quoted.group(1)
        return inner if inner.isdigit() else None

    def caller(self, variable: int) -> int | None:
        """The module call that passes a module variable its value (``None`` in a root)."""
        for target, label in self._edges(variable):
            if label == "default" and self.block_type(target) == "module":
                return target
        return None

    def variable_in_scope(self, idx: int, name: str) -> int | None:
        """The ``variable`` node ``name`` of the module instance that holds node ``idx``."""
        scope = self.instance(idx)
        for node in self.blocks("variable", name):
            if self.instance(node) == scope:
                return node
        return None

    def _next(self, node: int) -> Iterable[int]:
        """Where a reference continues from an intermediate node (a resource or data block ends it)."""
        block_type = self.block_type(node)
        if block_type in {"resource", "data"}:
            return []
        if block_type == "variable":
            name = str(self.attrs(node).get("block_name_", ""))
            following: list[int] = []
            for target, label in self._out(node):
                if label == "default" and self.block_type(target) == "module":
                    following.extend(t for t, lab in self._out(target) if _label_matches(lab, name))
                elif label == "default":
                    following.append(target)
            return following
        if block_type == "output":
            return [t for t, label in self._out(node) if _label_matches(label, "value")]
        return [t for t, _label in self._out(node)]

    def reached(self, idx: int, attribute: str) -> list[int]:
        """Every node a reference from ``attribute`` of node ``idx`` passes through or ends at."""
        key = (idx, attribute)
        if key not in self._reached:
            found: list[int] = []
            seen: set[int] = {idx}
            frontier = [target for target, label in self._out(idx) if _label_matches(label, attribute)]
            while frontier:
                node = frontier.pop()
                if node in seen:
                    continue
                seen.add(node)
                found.append(node)
                frontier.extend(self._next(node))
            self._reached[key] = found
        return self._reached[key]

    def referenced(self, idx: int, attribute: str) -> list[int]:
        """Resource and data nodes reached from ``attribute`` of node ``idx`` that have an instance."""
        if (idx, attribute) in self.pinned:
            return self.pinned[(idx, attribute)]
        found = [n for n in self.reached(idx, attribute) if self.block_type(n) in {"resource", "data"}]
        found.extend(n for n in self.entry_references(idx, attribute) if n not in found)
        return [n for n in found if self.exists(n)]

    def unset_variables(self, idx: int, attribute: str) -> list[str]:
        """Variables without a value that ``attribute`` of node ``idx`` is rendered from.

        checkov substitutes ``[]`` or ``{}`` for an unset ``list``/``map`` variable, which would read as
        an explicit empty value; the graph still shows the variable block without a ``default``.
        """
        return sorted(
            {
                f"var.{self.attrs(n).get('block_name_', '')}"
                for n in self.reached(idx, attribute)
                if self.block_type(n) == "variable" and not self.has_value(n)
            }
        )

    def has_value(self, variable: int) -> bool:
        """Whether a ``variable`` node has a value: its own ``default``, or an argument of its module call.

        checkov copies the caller's argument into the variable's ``default`` only when it renders the
        edge between them, which it never does where module calls refer to each other's outputs both
        ways (a queue named after its worker, the worker reading the queue's ARN): such a variable
        shows no ``default`` although the caller sets it.
        """
        attrs = self.attrs(variable)
        if "default" in attrs:
            return True
        call = self.caller(variable)
        return call is not None and str(attrs.get("block_name_", "")) in self.attrs(call)

    def resolve(self, idx: int, attribute: str, rendered: Any, types: Iterable[str]) -> list[int]:
        """Resource nodes of ``types`` that ``attribute`` (rendered as ``rendered``) refers to."""
        wanted = set(types)
        candidates = [
            n for n in self.referenced(idx, attribute) if self.attrs(n).get("resource_type") in wanted
        ]
        target = reference_target(rendered)
        if target is not None:
            resource_id = f"{target[0]}.{target[1]}"
            narrowed = [n for n in candidates if self.attrs(n).get("id_") == resource_id]
            if narrowed:
                return narrowed
            if not candidates and target[0] in wanted:
                instance = self.instance(idx)
                return [
                    n
                    for n in self.by_type.get(target[0], [])
                    if self.attrs(n).get("id_") == resource_id and self.instance(n) == instance
                ]
        return candidates

    def referrers(
        self,
        target: int,
        source_types: Iterable[str],
        attribute: str,
        path: Sequence[str],
        target_types: Iterable[str],
    ) -> list[int]:
        """Nodes of ``source_types`` whose ``attribute`` (value at ``path``) refers to ``target``."""
        wanted = tuple(target_types)
        found: list[int] = []
        for source_type in source_types:
            for node in self.by_type.get(source_type, []):
                if not self.exists(node):
                    continue
                rendered = value(self.conf(node), *path)
                if target in self.resolve(node, attribute, rendered, wanted):
                    found.append(node)
        return found
