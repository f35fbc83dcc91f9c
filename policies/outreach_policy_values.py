"""Reading checkov's rendered resource configuration fail closed, and the problems a rule records.

checkov renders module variables, locals, defaults and ``terraform.tfvars`` into the resource
configuration and wraps every attribute and block in a one-element list. What it cannot render
stays as text such as ``var.max_retries``; the readers here report such a value as unresolved,
naming the attribute, and the rule fails (every CKV_OUT_* rule fails closed).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

# An expression that checkov could not render: a variable, local, module output, for_each/count
# value or template interpolation left as text.
_UNRESOLVED = re.compile(r"(?<![\w.-])(?:var|local|module|each|count|self|path|terraform)\.[A-Za-z_]|\$\{")
# A rendered reference to another block: aws_sqs_queue.scrape.arn, data.aws_sqs_queue.x.arn,
# aws_sqs_queue.q["a"].arn, module_instance prefixes removed by checkov.
_REFERENCE = re.compile(
    r"^(?:data\.)?(?P<type>[a-z][a-z0-9_]*)\.(?P<name>[A-Za-z_][\w-]*)(?:\[[^\]]*\])?(?:\.|$)"
)
_NOT_A_BLOCK_TYPE = frozenset({"var", "local", "module", "each", "count", "self", "path"})

MISSING: Any = object()


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


def is_concrete(raw: Any) -> bool:
    """A value checkov rendered completely (a scalar, or a list of scalars)."""
    if isinstance(raw, bool | int | float):
        return True
    if isinstance(raw, str):
        # "None" is how checkov renders a null it computed (var.x ? null : ...): read the source.
        return not is_unresolved(raw) and raw.strip() not in {"{}", "[]", "None"}
    if isinstance(raw, list):
        return all(is_concrete(item) for item in raw)
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


def assign(conf: dict[str, Any], path: Sequence[str], new: Any) -> None:
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


def remove(conf: dict[str, Any], path: Sequence[str]) -> None:
    """Drop the attribute at ``path`` from a checkov configuration (it reads as absent afterwards)."""
    container: Any = conf
    for key in path[:-1]:
        container = container.get(key) if isinstance(container, dict) else None
        if isinstance(container, list):
            container = container[0] if container else None
    if isinstance(container, dict):
        container.pop(path[-1], None)


def is_set(conf: Any, *path: str) -> bool:
    """The attribute is present and not null."""
    return value(conf, *path) not in (MISSING, None)


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
    """A boolean attribute (also ``"true"``/``"false"`` text); ``None`` when absent or unresolved."""
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
    if match is None or match.group("type") in _NOT_A_BLOCK_TYPE:
        return None
    return match.group("type"), match.group("name")


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
