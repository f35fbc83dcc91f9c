"""Shared machinery for the outreach checkov policies (CKV_OUT_*).

checkov loads every ``.py`` file of an ``--external-checks-dir`` folder as a module named after the
file and puts the folder on ``sys.path``, so the checks import this module by its plain name. It
defines no ``check`` object of its own.

Two things every policy here needs and checkov's single-resource API does not give:

* Reading rendered values *fail closed*. checkov renders module variables, locals, defaults and
  ``terraform.tfvars`` into the resource configuration; what it cannot render stays as text such as
  ``var.max_retries``. A value that is still an expression is reported as unresolved, naming the
  attribute, and the rule fails (rule 8 of the policy set).
* Following references between resources across module boundaries. ``self.graph`` (set on every
  check by checkov's registry) holds one node per block; edges carry the attribute path that makes
  the reference, through ``variable``, ``module``, ``output`` and ``locals`` nodes. ``GraphView``
  walks those edges from an attribute to the resource blocks it names.
"""

from __future__ import annotations

import copy
import json
import os
import re
from abc import abstractmethod
from collections.abc import Iterable, Sequence
from typing import Any

from checkov.common.models.enums import CheckCategories, CheckResult
from checkov.terraform.checks.resource.base_resource_check import BaseResourceCheck
from outreach_policy_source import Located, block_body, is_literal, literal, locate, optional_default

# An expression that checkov could not render: a variable, local, module output, for_each/count
# value or template interpolation left as text.
_UNRESOLVED = re.compile(r"(?<![\w.-])(?:var|local|module|each|count|self|path|terraform)\.[A-Za-z_]|\$\{")
# A rendered reference to another block: aws_sqs_queue.scrape.arn, data.aws_sqs_queue.x.arn,
# aws_sqs_queue.q["a"].arn, module_instance prefixes removed by checkov.
_REFERENCE = re.compile(
    r"^(?:data\.)?(?P<type>[a-z][a-z0-9_]*)\.(?P<name>[A-Za-z_][\w-]*)(?:\[[^\]]*\])?(?:\.|$)"
)
_INDEX_SEGMENT = re.compile(r"\.\d+(?=\.|$)")

STREAM_SOURCE_TYPES = frozenset({"aws_dynamodb_table", "aws_kinesis_stream", "aws_kinesis_stream_consumer"})
QUEUE_TYPES = frozenset({"aws_sqs_queue"})
FUNCTION_TYPES = frozenset({"aws_lambda_function"})
ALIAS_TYPES = frozenset({"aws_lambda_alias"})

MISSING: Any = object()
# Results of evaluating source expressions: ABSENT is null / an unset optional attribute (the
# provider default applies), UNKNOWN is an expression this code cannot evaluate.
ABSENT: Any = object()
UNKNOWN: Any = object()
_VAR_PATH = re.compile(r"var\.([A-Za-z_][\w-]*)((?:\.[A-Za-z_][\w-]*)*)")


class Problems:
    """The reasons a resource fails one rule; each becomes a ``details`` line in checkov's report."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._unresolved: set[str] = set()

    def add(self, line: str) -> None:
        if line not in self.lines:
            self.lines.append(line)

    def unresolved(self, attribute: str, raw: Any) -> None:
        if attribute in self._unresolved:
            return
        self._unresolved.add(attribute)
        self.add(
            f"unresolved: {attribute} = {raw!r} cannot be evaluated (an unset variable or an expression "
            "checkov cannot render); the rule fails closed until it renders to a concrete value"
        )

    def __bool__(self) -> bool:
        return bool(self.lines)

    def child(self, owner: str, separator: str = ": ") -> Problems:
        """Problems about ``owner`` (another resource, or a nested block with ``separator="."``).

        Lines are reported on the checked resource prefixed with the owner; unresolved attributes are
        named ``<owner>.<attribute>``.
        """
        return _OwnedProblems(self, owner, separator)


class _OwnedProblems(Problems):
    def __init__(self, parent: Problems, owner: str, separator: str) -> None:
        super().__init__()
        self._parent = parent
        self._owner = owner
        self._separator = separator

    def add(self, line: str) -> None:
        super().add(line)
        self._parent.add(f"{self._owner}{self._separator}{line}")

    def unresolved(self, attribute: str, raw: Any) -> None:
        self.lines.append(attribute)
        self._parent.unresolved(f"{self._owner}.{attribute}", raw)


def is_unresolved(raw: Any) -> bool:
    """True for a value that is still a Terraform expression after checkov's rendering."""
    if isinstance(raw, str):
        return bool(_UNRESOLVED.search(raw))
    if isinstance(raw, dict):
        return any(is_unresolved(v) for v in raw.values())
    if isinstance(raw, list):
        return any(is_unresolved(v) for v in raw)
    return False


def value(conf: Any, *path: str) -> Any:
    """The value at ``path`` in a checkov resource configuration, or ``MISSING``.

    checkov wraps every attribute and block in a one-element list; each step unwraps one level.
    """
    current = conf
    for key in path:
        if not isinstance(current, dict) or key not in current:
            return MISSING
        current = current[key]
        if isinstance(current, list):
            if not current:
                return MISSING
            current = current[0]
    return current


def is_set(conf: Any, *path: str) -> bool:
    """The attribute is present and not null."""
    return value(conf, *path) not in (MISSING, None)


def _concrete(raw: Any) -> bool:
    """A value checkov rendered completely (a scalar, or a list of scalars)."""
    if isinstance(raw, bool | int | float):
        return True
    if isinstance(raw, str):
        return not is_unresolved(raw) and raw.strip() not in {"{}", "[]"}
    if isinstance(raw, list):
        return all(_concrete(item) for item in raw)
    return False


def _lookup(document: Any, keys: Sequence[str]) -> Any:
    current = document
    for key in keys:
        if isinstance(current, list) and len(current) == 1:
            current = current[0]
        if not isinstance(current, dict):
            return UNKNOWN
        if key not in current:
            return ABSENT
        current = current[key]
    return ABSENT if current is None else current


def _assign(conf: dict[str, Any], path: Sequence[str], new: Any) -> None:
    """Replace the value at ``path`` in a checkov configuration, keeping its list wrapping."""
    container: Any = conf
    for key in path[:-1]:
        if not isinstance(container, dict) or key not in container:
            return
        container = container[key]
        if isinstance(container, list):
            if not container:
                return
            container = container[0]
    if isinstance(container, dict) and path[-1] in container:
        wrapped = isinstance(container[path[-1]], list) and not isinstance(new, list)
        container[path[-1]] = [new] if wrapped else new


def block(conf: Any, *path: str) -> dict[str, Any] | None:
    """The nested block at ``path`` as a dict (``None`` when absent or not a block)."""
    found = value(conf, *path)
    return found if isinstance(found, dict) else None


def read_int(conf: Any, path: Sequence[str], problems: Problems) -> int | None:
    """An integer attribute; ``None`` when absent or unresolved (the latter recorded)."""
    raw = value(conf, *path)
    if raw is MISSING or raw is None:
        return None
    if isinstance(raw, bool):
        problems.unresolved(".".join(path), raw)
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    if isinstance(raw, str) and re.fullmatch(r"-?\d+", raw.strip()):
        return int(raw.strip())
    problems.unresolved(".".join(path), raw)
    return None


def read_bool(conf: Any, path: Sequence[str], problems: Problems) -> bool | None:
    raw = value(conf, *path)
    if raw is MISSING or raw is None:
        return None
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().lower() in {"true", "false"}:
        return raw.strip().lower() == "true"
    problems.unresolved(".".join(path), raw)
    return None


def read_str(conf: Any, path: Sequence[str], problems: Problems) -> str | None:
    """A string attribute (an ARN, a name, an enum); ``None`` when absent, empty or unresolved."""
    raw = value(conf, *path)
    if raw is MISSING or raw is None:
        return None
    if not isinstance(raw, str) or is_unresolved(raw):
        problems.unresolved(".".join(path), raw)
        return None
    return raw or None


def read_str_list(conf: Any, attribute: str, problems: Problems) -> list[str] | None:
    """A list-of-strings attribute, flattening checkov's list wrapping."""
    if not isinstance(conf, dict) or attribute not in conf:
        return None
    flat: list[Any] = []

    def walk(item: Any) -> None:
        if isinstance(item, list):
            for element in item:
                walk(element)
        else:
            flat.append(item)

    walk(conf[attribute])
    if any(not isinstance(item, str) or is_unresolved(item) for item in flat):
        problems.unresolved(attribute, conf[attribute])
        return None
    return [str(item) for item in flat]


def read_json_object(conf: Any, attribute: str, problems: Problems) -> dict[str, Any] | None:
    """A JSON document attribute (``jsonencode({...})`` renders to a dict, a heredoc to text)."""
    raw = value(conf, attribute)
    if raw is MISSING or raw is None or raw == "":
        return None
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            problems.unresolved(attribute, raw)
            return None
    if not isinstance(raw, dict):
        problems.unresolved(attribute, raw)
        return None
    return raw


def reference_target(raw: Any) -> tuple[str, str] | None:
    """``(type, name)`` of a rendered reference such as ``aws_sqs_queue.scrape.arn``."""
    if not isinstance(raw, str) or raw.startswith("arn:"):
        return None
    match = _REFERENCE.match(raw)
    if match is None or match.group("type") in {"var", "local", "module", "each", "count", "self", "path"}:
        return None
    return match.group("type"), match.group("name")


def arn_service(raw: Any) -> str | None:
    """The service part of a literal ARN (``sqs``, ``dynamodb``, ``lambda``, ...)."""
    if isinstance(raw, str) and raw.startswith("arn:"):
        parts = raw.split(":")
        if len(parts) > 2:
            return parts[2]
    return None


def _label_matches(label: str, attribute: str) -> bool:
    label = label.removeprefix("[cross-variable] ")
    label = _INDEX_SEGMENT.sub("", label)
    return label == attribute or label.startswith(attribute + ".")


_SOURCE_CACHE: dict[str, list[str]] = {}


def _source_lines(path: str) -> list[str]:
    if path not in _SOURCE_CACHE:
        try:
            with open(path, encoding="utf-8") as handle:
                _SOURCE_CACHE[path] = handle.read().splitlines()
        except OSError:
            _SOURCE_CACHE[path] = []
    return _SOURCE_CACHE[path]


InstanceKey = tuple[str, str, Any]


def _module_instance(raw: Any) -> InstanceKey | None:
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
        return name, path, _module_instance(nested)
    return None


class GraphView:
    """Read-only view of checkov's rustworkx resource graph."""

    def __init__(self, graph: Any) -> None:
        self.graph = graph
        self._by_conf: dict[int, int] = {}
        self.by_type: dict[str, list[int]] = {}
        self._resolved: dict[tuple[int, str], list[int]] = {}
        self._outputs: dict[str, list[int]] | None = None
        self._variables: dict[str, list[int]] | None = None
        self._bodies: dict[int, str | None] = {}
        for idx in graph.node_indices():
            attrs = self.attrs(idx)
            if attrs.get("block_type_") != "resource":
                continue
            self.by_type.setdefault(str(attrs.get("resource_type")), []).append(idx)
            config = attrs.get("config_")
            if isinstance(config, dict):
                for by_name in config.values():
                    if isinstance(by_name, dict):
                        for resource_conf in by_name.values():
                            self._by_conf[id(resource_conf)] = idx

    def attrs(self, idx: int) -> dict[str, Any]:
        node = self.graph[idx]
        attrs = node[1] if isinstance(node, tuple) else node
        return attrs if isinstance(attrs, dict) else {}

    def conf(self, idx: int) -> dict[str, Any]:
        """The node's configuration in the list-wrapped form checks receive."""
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

    def _instance(self, idx: int) -> tuple[str, str]:
        attrs = self.attrs(idx)
        return os.path.dirname(str(attrs.get("file_path_", ""))), str(attrs.get("source_module_object_"))

    def _out(self, idx: int) -> list[tuple[int, str]]:
        edges: list[tuple[int, str]] = []
        for _source, target, data in self.graph.out_edges(idx):
            label = str(data.get("label", "") if isinstance(data, dict) else getattr(data, "label", ""))
            if self.attrs(target).get("block_type_") == "output":
                edges.extend((output, label) for output in self._module_output_instances(idx, target, label))
            else:
                edges.append((target, label))
        return edges

    def _module_output_instances(self, source: int, output: int, label: str) -> list[int]:
        """The output node(s) of the module instance that ``source`` really names.

        checkov links ``module.<name>.<output>`` to the first output of that name whose module was
        called from the same file, so with two calls of one module the edge may point at the wrong
        instance. The instance name is read back from the source text of the referencing attribute.
        """
        output_attrs = self.attrs(output)
        output_name = str(output_attrs.get("block_name_", ""))
        names = self._module_names_in_attribute(source, label, output_name)
        if not names:
            return [output]
        source_attrs = self.attrs(source)
        source_dir = os.path.dirname(str(source_attrs.get("file_path_", "")))
        source_instance = _module_instance(source_attrs.get("source_module_object_"))
        output_dir = os.path.dirname(str(output_attrs.get("file_path_", "")))
        matches = []
        for candidate in self._outputs_by_name().get(output_name, []):
            attrs = self.attrs(candidate)
            instance = _module_instance(attrs.get("source_module_object_"))
            if (
                instance is not None
                and instance[0] in names
                and os.path.dirname(instance[1]) == source_dir
                and instance[2] == source_instance
                and os.path.dirname(str(attrs.get("file_path_", ""))) == output_dir
            ):
                matches.append(candidate)
        return matches or [output]

    def _outputs_by_name(self) -> dict[str, list[int]]:
        if self._outputs is None:
            self._outputs = {}
            for idx in self.graph.node_indices():
                attrs = self.attrs(idx)
                if attrs.get("block_type_") == "output":
                    self._outputs.setdefault(str(attrs.get("block_name_", "")), []).append(idx)
        return self._outputs

    def _module_names_in_attribute(self, idx: int, label: str, output_name: str) -> set[str]:
        """Module call names in ``module.<name>.<output_name>`` references of one attribute's source text."""
        attrs = self.attrs(idx)
        lines = _source_lines(str(attrs.get("file_path_", "")))
        start, end = attrs.get("__start_line__"), attrs.get("__end_line__")
        if not lines or not isinstance(start, int) or not isinstance(end, int):
            return set()
        block_lines = lines[start - 1 : end]
        key = label.removeprefix("[cross-variable] ").split(".")[-1]
        assignment = re.compile(rf"^(\s*){re.escape(key)}\s*=")
        text: list[str] = []
        for position, line in enumerate(block_lines):
            found = assignment.match(line)
            if found is None:
                continue
            indent = len(found.group(1))
            text.append(line)
            for following in block_lines[position + 1 :]:
                stripped = following.strip()
                following_indent = len(following) - len(following.lstrip())
                if stripped and following_indent <= indent and re.match(r"^([\w-]+\s*[={]|\})", stripped):
                    break
                text.append(following)
        reference = re.compile(rf"\bmodule\.([A-Za-z_][\w-]*)(?:\[[^\]]*\])?\.{re.escape(output_name)}\b")
        return set(reference.findall("\n".join(text)))

    def _referenced(self, idx: int, attribute: str) -> list[int]:
        """Resource and data nodes reached from ``attribute`` of node ``idx`` along reference edges."""
        key = (idx, attribute)
        if key in self._resolved:
            return self._resolved[key]
        found: list[int] = []
        seen: set[int] = set()
        frontier = [target for target, label in self._out(idx) if _label_matches(label, attribute)]
        while frontier:
            node = frontier.pop()
            if node in seen or node == idx:
                continue
            seen.add(node)
            attrs = self.attrs(node)
            block_type = attrs.get("block_type_")
            if block_type in {"resource", "data"}:
                found.append(node)
            elif block_type == "variable":
                name = str(attrs.get("block_name_", ""))
                for module_node, label in self._out(node):
                    if label == "default" and self.attrs(module_node).get("block_type_") == "module":
                        frontier.extend(t for t, lab in self._out(module_node) if _label_matches(lab, name))
                    elif label == "default":
                        frontier.append(module_node)
            elif block_type == "output":
                frontier.extend(t for t, label in self._out(node) if _label_matches(label, "value"))
            else:
                frontier.extend(t for t, _label in self._out(node))
        self._resolved[key] = found
        return found

    def unset_variables(self, idx: int, attribute: str) -> list[str]:
        """Variables without a value that ``attribute`` of node ``idx`` is rendered from.

        checkov substitutes ``[]`` or ``{}`` for an unset ``list``/``map`` variable, which would read as
        an explicit empty value; the graph still shows the variable block without a ``default``.
        """
        unset: list[str] = []
        seen: set[int] = set()
        frontier = [target for target, label in self._out(idx) if _label_matches(label, attribute)]
        while frontier:
            node = frontier.pop()
            if node in seen or node == idx:
                continue
            seen.add(node)
            attrs = self.attrs(node)
            block_type = attrs.get("block_type_")
            if block_type == "variable":
                name = str(attrs.get("block_name_", ""))
                if "default" not in attrs:
                    unset.append(f"var.{name}")
                    continue
                for module_node, label in self._out(node):
                    if label == "default" and self.attrs(module_node).get("block_type_") == "module":
                        frontier.extend(t for t, lab in self._out(module_node) if _label_matches(lab, name))
            elif block_type == "output":
                frontier.extend(t for t, label in self._out(node) if _label_matches(label, "value"))
            elif block_type == "locals":
                frontier.extend(t for t, _label in self._out(node))
        return sorted(set(unset))

    # ----- source expressions where checkov's rendering stops -----

    def _body(self, idx: int) -> str | None:
        if idx not in self._bodies:
            attrs = self.attrs(idx)
            lines = _source_lines(str(attrs.get("file_path_", "")))
            start, end = attrs.get("__start_line__"), attrs.get("__end_line__")
            if lines and isinstance(start, int) and isinstance(end, int):
                self._bodies[idx] = block_body("\n".join(lines[start - 1 : end]))
            else:
                self._bodies[idx] = None
        return self._bodies[idx]

    def locate(self, idx: int, path: Sequence[str]) -> Located | None:
        body = self._body(idx)
        return None if body is None else locate(body, list(path))

    def _variable_in_scope(self, idx: int, name: str) -> int | None:
        if self._variables is None:
            self._variables = {}
            for node in self.graph.node_indices():
                attrs = self.attrs(node)
                if attrs.get("block_type_") == "variable":
                    self._variables.setdefault(str(attrs.get("block_name_", "")), []).append(node)
        scope = self._instance(idx)
        for node in self._variables.get(name, []):
            if self._instance(node) == scope:
                return node
        return None

    def _caller(self, variable: int) -> int | None:
        for _source, target, data in self.graph.out_edges(variable):
            label = data.get("label", "") if isinstance(data, dict) else getattr(data, "label", "")
            if label == "default" and self.attrs(target).get("block_type_") == "module":
                return int(target)
        return None

    def evaluate(self, idx: int, path: Sequence[str]) -> Any:
        """The value of an attribute path from its source expression (ABSENT or UNKNOWN otherwise)."""
        located = self.locate(idx, path)
        if located is None:
            return UNKNOWN
        if located.expression is None:
            return ABSENT
        return self._expression_value(idx, located.expression, located.remaining, 0)

    def _expression_value(self, scope: int, expression: str, remaining: Sequence[str], depth: int) -> Any:
        expression = expression.strip()
        if depth > 16:
            return UNKNOWN
        if expression == "null":
            return ABSENT
        match = _VAR_PATH.fullmatch(expression)
        if match is not None:
            variable = self._variable_in_scope(scope, match.group(1))
            if variable is None:
                return UNKNOWN
            keys = [key for key in match.group(2).split(".") if key] + list(remaining)
            return self._variable_value(variable, keys, depth + 1)
        if not remaining and is_literal(expression):
            parsed = literal(expression)
            return ABSENT if parsed is None else parsed
        return UNKNOWN

    def _variable_value(self, variable: int, keys: list[str], depth: int) -> Any:
        """A variable's value at ``keys``: what the caller passes, else its default, else optional()."""
        attrs = self.attrs(variable)
        name = str(attrs.get("block_name_", ""))
        caller = self._caller(variable)
        located = self.locate(caller, [name, *keys]) if caller is not None else None
        result: Any
        if caller is not None and located is not None and located.expression is not None:
            result = self._expression_value(caller, located.expression, located.remaining, depth)
        elif located is not None and located.matched >= 1:
            result = ABSENT  # the caller passes an object without this attribute
        elif "default" in attrs:
            # Not passed by a caller: the declared default (for a root, checkov folds tfvars in here).
            result = _lookup(attrs.get("default"), keys)
        else:
            result = UNKNOWN
        if result is ABSENT and len(keys) == 1:
            type_location = self.locate(variable, ["type"])
            if type_location is not None and type_location.expression is not None:
                found, default = optional_default(type_location.expression, keys[0])
                if found:
                    return ABSENT if default is None else default
        return result

    def effective_conf(self, idx: int, conf: dict[str, Any], paths: Iterable[str]) -> dict[str, Any]:
        """``conf`` with the values at ``paths`` completed from the source where checkov left them.

        A value checkov rendered completely is kept. Otherwise the attribute's expression is
        evaluated (variables through their callers, object attributes through optional()
        defaults), and an unrendered reference to another block (``module.x[0].arn``) is replaced
        by the resource it reaches in the graph. What stays unknown is left for the rule to report.
        """
        result = copy.deepcopy(conf)
        for path in paths:
            segments = path.split(".")
            raw = value(conf, *segments)
            if raw is MISSING or _concrete(raw):
                continue
            evaluated = self.evaluate(idx, segments)
            if evaluated is ABSENT:
                _assign(result, segments, None)
            elif evaluated is not UNKNOWN and _concrete(evaluated):
                _assign(result, segments, evaluated)
            elif isinstance(raw, str) and is_unresolved(raw):
                targets = [
                    node
                    for node in self._referenced(idx, path)
                    if self.attrs(node).get("block_type_") in {"resource", "data"}
                ]
                if len(targets) == 1:
                    reference = f"{self.attrs(targets[0]).get('id_')}.{raw.rsplit('.', 1)[-1]}"
                    _assign(result, segments, reference)
        return result

    def effective(self, idx: int, paths: Iterable[str]) -> dict[str, Any]:
        """The node's own configuration completed at ``paths`` (see ``effective_conf``)."""
        return self.effective_conf(idx, self.conf(idx), paths)

    def resolve(self, idx: int, attribute: str, rendered: Any, types: Iterable[str]) -> list[int]:
        """Resource nodes of ``types`` that ``attribute`` (rendered as ``rendered``) refers to."""
        wanted = set(types)
        candidates = [
            n for n in self._referenced(idx, attribute) if self.attrs(n).get("resource_type") in wanted
        ]
        target = reference_target(rendered)
        if target is not None:
            resource_id = f"{target[0]}.{target[1]}"
            narrowed = [n for n in candidates if self.attrs(n).get("id_") == resource_id]
            if narrowed:
                return narrowed
            if not candidates and target[0] in wanted:
                instance = self._instance(idx)
                return [
                    n
                    for n in self.by_type.get(target[0], [])
                    if self.attrs(n).get("id_") == resource_id and self._instance(n) == instance
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
                rendered = value(self.conf(node), *path)
                if target in self.resolve(node, attribute, rendered, wanted):
                    found.append(node)
        return found

    def function_of(self, idx: int, attribute: str, rendered: Any) -> list[int]:
        """Lambda function nodes named by ``attribute`` directly or through an alias."""
        functions = self.resolve(idx, attribute, rendered, FUNCTION_TYPES)
        for alias in self.resolve(idx, attribute, rendered, ALIAS_TYPES):
            alias_conf = self.conf(alias)
            functions.extend(
                self.resolve(alias, "function_name", value(alias_conf, "function_name"), FUNCTION_TYPES)
            )
        return list(dict.fromkeys(functions))


_VIEWS: dict[int, GraphView] = {}


def view_of(graph: Any) -> GraphView | None:
    if graph is None or not hasattr(graph, "node_indices") or not hasattr(graph, "out_edges"):
        return None
    cached = _VIEWS.get(id(graph))
    if cached is None or cached.graph is not graph:
        cached = GraphView(graph)
        _VIEWS.clear()
        _VIEWS[id(graph)] = cached
    return cached


# Attributes through which a resource names a dead-letter queue or on-failure destination.
DEAD_LETTER_REFERENCES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("aws_sqs_queue", "redrive_policy", ("redrive_policy",)),
    ("aws_sqs_queue_redrive_policy", "redrive_policy", ("redrive_policy",)),
    (
        "aws_lambda_event_source_mapping",
        "destination_config.on_failure.destination_arn",
        ("destination_config", "on_failure", "destination_arn"),
    ),
    (
        "aws_lambda_function_event_invoke_config",
        "destination_config.on_failure.destination",
        ("destination_config", "on_failure", "destination"),
    ),
    ("aws_lambda_function", "dead_letter_config.target_arn", ("dead_letter_config", "target_arn")),
    ("aws_cloudwatch_event_target", "dead_letter_config.arn", ("dead_letter_config", "arn")),
    ("aws_scheduler_schedule", "target.dead_letter_config.arn", ("target", "dead_letter_config", "arn")),
    (
        "aws_pipes_pipe",
        "source_parameters.dynamodb_stream_parameters.dead_letter_config.arn",
        ("source_parameters", "dynamodb_stream_parameters", "dead_letter_config", "arn"),
    ),
    (
        "aws_pipes_pipe",
        "source_parameters.kinesis_stream_parameters.dead_letter_config.arn",
        ("source_parameters", "kinesis_stream_parameters", "dead_letter_config", "arn"),
    ),
)


def dead_letter_users(view: GraphView, queue: int) -> list[int]:
    """Resources that name ``queue`` as their dead-letter queue or on-failure destination."""
    users: list[int] = []
    for source_type, attribute, path in DEAD_LETTER_REFERENCES:
        users.extend(
            node
            for node in view.referrers(queue, (source_type,), attribute, path, QUEUE_TYPES)
            if node != queue
        )
    return users


def consuming_mappings(view: GraphView, queue: int) -> list[int]:
    """Lambda event source mappings that poll ``queue``."""
    return view.referrers(
        queue, ("aws_lambda_event_source_mapping",), "event_source_arn", ("event_source_arn",), QUEUE_TYPES
    )


def mapping_source_kind(
    view: GraphView | None, idx: int | None, conf: dict[str, Any], problems: Problems
) -> str:
    """``stream`` (DynamoDB/Kinesis), ``sqs``, ``other`` or ``unresolved`` for an event source mapping."""
    raw = value(conf, "event_source_arn")
    if raw is MISSING or raw is None:
        return "other"  # self-managed Kafka and similar sources have no event_source_arn
    if view is not None and idx is not None:
        if view.resolve(idx, "event_source_arn", raw, STREAM_SOURCE_TYPES):
            return "stream"
        if view.resolve(idx, "event_source_arn", raw, QUEUE_TYPES):
            return "sqs"
    target = reference_target(raw)
    if target is not None:
        if target[0] in STREAM_SOURCE_TYPES:
            return "stream"
        if target[0] in QUEUE_TYPES:
            return "sqs"
        return "other"
    service = arn_service(raw)
    if service in {"dynamodb", "kinesis"}:
        return "stream"
    if service == "sqs":
        return "sqs"
    if service is not None:
        return "other"
    problems.unresolved("event_source_arn", raw)
    return "unresolved"


class OutreachCheck(BaseResourceCheck):
    """Base for the CKV_OUT_* checks: fail closed on unresolved values and on internal errors.

    checkov turns an exception raised by a check into an UNKNOWN result that is left out of the
    report, which would let a broken rule pass silently; here it becomes a FAILED result instead.
    """

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

    def scan_resource_conf(self, conf: dict[str, list[Any]]) -> CheckResult:
        problems = Problems()
        try:
            self.view = view_of(self.graph)
            self.node = self.view.node_of(conf) if self.view is not None else None
            if self.view is not None and self.node is not None:
                conf = self.view.effective_conf(self.node, conf, self.inputs)
            applicable = self.evaluate(conf, problems)
            if applicable and self.view is not None and self.node is not None:
                flag_unset_variables(self.view, self.node, self.inputs, problems)
        except Exception as error:  # noqa: BLE001 - a broken rule must fail the scan, not vanish from it
            self.details = [f"policy error in {self.id}: {type(error).__name__}: {error}"]
            return CheckResult.FAILED
        if not applicable and not problems:
            return CheckResult.UNKNOWN
        self.details = list(problems.lines)
        return CheckResult.FAILED if problems else CheckResult.PASSED

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


def flag_unset_variables(view: GraphView, idx: int, attributes: Iterable[str], problems: Problems) -> None:
    """Record every attribute of node ``idx`` that is rendered from a variable without a value."""
    for attribute in attributes:
        for variable in view.unset_variables(idx, attribute):
            problems.unresolved(attribute, f"{variable} (no value)")


def require_report_batch_item_failures(conf: dict[str, Any], problems: Problems, consequence: str) -> None:
    """Record a problem unless ``function_response_types`` contains ReportBatchItemFailures."""
    types = read_str_list(conf, "function_response_types", problems)
    if not is_set(conf, "function_response_types") or (
        types is not None and "ReportBatchItemFailures" not in types
    ):
        problems.add(f'function_response_types must contain "ReportBatchItemFailures": {consequence}')


def require_int_in_range(
    conf: Any, path: Sequence[str], low: int, high: int, problems: Problems, when_absent: str
) -> int | None:
    """Record a problem unless the integer at ``path`` is set, resolved and within ``low..high``."""
    attribute = ".".join(path)
    number = read_int(conf, path, problems)
    if not is_set(conf, *path):
        problems.add(f"{attribute} is not set ({when_absent}); set a value in {low}..{high}")
    elif number is not None and not low <= number <= high:
        problems.add(f"{attribute} = {number} is outside {low}..{high}")
    return number


def require_reference(conf: Any, path: Sequence[str], problems: Problems, when_absent: str) -> str | None:
    """Record a problem unless the ARN/name at ``path`` is set and resolved."""
    found = read_str(conf, path, problems)
    if not is_set(conf, *path) or value(conf, *path) == "":
        problems.add(f"{'.'.join(path)} is not set: {when_absent}")
    return found
