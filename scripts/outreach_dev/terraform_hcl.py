"""The project's Terraform read as data: each module's .tf files parsed (python-hcl2) into one document.

Tests, benchmarks and the development tools that need what a module declares (a variable's default,
a resource's arguments, the environment a function is given) read it here, so the modules stay the
one description. Expressions come back as python-hcl2 writes them (``${var.name}``); ``evaluate``
works out the few forms the functions' settings use (see ``outreach_dev.function_env``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import hcl2

from outreach_dev import hcl_files, terraform_cli

_OPTIONS = hcl2.SerializationOptions(strip_string_quotes=True, with_comments=False)
_WITHOUT_BLOCK_MARKERS = hcl2.SerializationOptions(
    strip_string_quotes=True, with_comments=False, explicit_blocks=False
)


def load_file(path: Path, *, block_markers: bool = True) -> dict[str, Any]:
    """One .tf or .tfvars file as python-hcl2 reads it: block kinds to lists of blocks, strings
    unquoted, ``${...}`` kept; each block body marked ``__is_block__`` unless ``block_markers`` is off."""
    return hcl_files.load(path, _OPTIONS if block_markers else _WITHOUT_BLOCK_MARKERS)


@cache
def load_module(directory: Path) -> dict[str, list[Any]]:
    """Every .tf file of ``directory``, their blocks of each kind put together in file order."""
    merged: dict[str, list[Any]] = {}
    for path in sorted(directory.glob("*.tf")):
        for kind, blocks in load_file(path).items():
            merged.setdefault(kind, []).extend(blocks if isinstance(blocks, list) else [blocks])
    return merged


def module_dir(name: str) -> Path:
    return terraform_cli.MODULES_DIR / name


def named(document: Mapping[str, list[Any]], kind: str) -> dict[str, Any]:
    """Blocks of one kind by their label (``variable``, ``output``, ``module``); ``locals`` merged."""
    found: dict[str, Any] = {}
    for block in document.get(kind, []):
        found.update({k: v for k, v in block.items() if k != "__is_block__"})
    return found


def resource(document: Mapping[str, list[Any]], resource_type: str, name: str) -> dict[str, Any]:
    """The arguments of ``resource "<resource_type>" "<name>"``."""
    for block in document.get("resource", []):
        if name in block.get(resource_type, {}):
            return dict(block[resource_type][name])
    raise LookupError(f"no resource {resource_type}.{name}")


def strip(expression: Any) -> Any:
    """An expression without python-hcl2's ``${...}`` wrapper."""
    if isinstance(expression, str) and expression.startswith("${") and expression.endswith("}"):
        return expression[2:-1]
    return expression


def split_top_level(text: str, separator: str = ",") -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    depth, quoted = 0, False
    for char in text:
        if char == '"':
            quoted = not quoted
        elif not quoted and char in "([{":
            depth += 1
        elif not quoted and char in ")]}":
            depth -= 1
        if char == separator and depth == 0 and not quoted:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    if "".join(current).strip():
        parts.append("".join(current).strip())
    return parts


def _literal(text: str) -> Any:
    text = text.strip()
    if text in {"true", "false"}:
        return text == "true"
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    if text.startswith("[") and text.endswith("]"):
        return [_literal(part) for part in split_top_level(text[1:-1])]
    if text.startswith("{") and text.endswith("}"):
        return {}
    return int(text) if re.fullmatch(r"-?\d+", text) else float(text)


def _attribute_defaults(type_expression: str) -> dict[str, Any]:
    """``name = optional(type, default)`` attributes of an object type, by name (nested objects too)."""
    inner = strip(type_expression).strip()
    if not inner.startswith("object({"):
        return {}
    defaults: dict[str, Any] = {}
    for attribute in split_top_level(inner[len("object({") : -len("})")]):
        name, _, declared = attribute.partition("=")
        declared = declared.strip()
        if not declared.startswith("optional("):
            continue
        arguments = split_top_level(declared[len("optional(") : -1])
        nested = _attribute_defaults(arguments[0])
        if len(arguments) > 1:
            value = _literal(arguments[1])
            defaults[name.strip()] = {**nested, **value} if isinstance(value, dict) else value
        elif nested:
            defaults[name.strip()] = None
    return defaults


def variable_defaults(directory: Path) -> dict[str, Any]:
    """Each variable's value when the caller passes none: its default, with an object's optional
    attributes filled in (``optional(number, 5400)``). A required variable is left out."""
    values: dict[str, Any] = {}
    for name, variable in named(load_module(directory), "variable").items():
        if "default" not in variable:
            continue
        default = variable["default"]
        attributes = _attribute_defaults(str(variable.get("type", "")))
        values[name] = {**attributes, **default} if isinstance(default, dict) and attributes else default
    return values


_FOR_JOIN = re.compile(r'^join\("(.*)", \[for (\w+) in (.+) : tostring\(\2\)\]\)$')
_REFERENCE = re.compile(r"\b(var|local|module)\.([\w.]+)")


def evaluate(expression: Any, resolve: Callable[[str, str], Any]) -> Any:
    """The value of a settings expression: literals, ``var.``/``local.``/``module.`` references
    (``resolve(kind, dotted_path)``), ``tostring``, ``join`` of a ``for`` over a list, ``max`` with a
    spread list, ``coalesce`` (its first argument that is not null: a reference ``resolve`` finds null
    raises ``LookupError``), arithmetic and ``a ? b : c`` over them. Anything else raises
    ``ValueError``."""
    text = strip(expression)
    if not isinstance(text, str):
        return text
    text = text.strip()
    if text.startswith("(") and text.endswith(")") and split_top_level(text[1:-1]) == [text[1:-1].strip()]:
        return evaluate(text[1:-1], resolve)
    if joined := _FOR_JOIN.match(text):
        return joined[1].join(str(item) for item in evaluate(joined[3], resolve))
    if text.startswith("coalesce(") and text.endswith(")"):
        *first, last = split_top_level(text[len("coalesce(") : -1])
        for argument in first:
            try:
                found = evaluate(argument, resolve)
            except LookupError:
                continue
            if found is not None:
                return found
        return evaluate(last, resolve)
    if text.startswith("tostring(") and text.endswith(")"):
        value = evaluate(text[len("tostring(") : -1], resolve)
        return str(value).lower() if isinstance(value, bool) else str(value)
    ternary = re.fullmatch(r"(.+?) \? (.+?) : (.+)", text)
    if ternary:
        chosen = ternary[2] if evaluate(ternary[1], resolve) else ternary[3]
        return evaluate(chosen, resolve)
    python = _REFERENCE.sub(lambda m: f"_ref({m[1]!r}, {m[2]!r})", text)
    python = re.sub(r"max\((_ref\([^()]*\)) \.\.\.\)", r"max(*\1)", python)
    if re.search(r"[^\w\s.()+\-*/,'\"<>=!*]", python):
        raise ValueError(f"not a settings expression: {text}")
    try:
        return eval(python, {"__builtins__": {}, "max": max, "min": min, "_ref": resolve})
    except (NameError, SyntaxError, TypeError) as exc:
        raise ValueError(f"not a settings expression: {text}") from exc
