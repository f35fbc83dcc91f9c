"""The settings each function gets from Terraform, worked out from the modules' own defaults.

Tests and benchmarks run the handlers in-process, where no Terraform sets their environment: they
take it from here, so every setting keeps the one default its module declares. The pipeline is read
from modules/outreach-pipeline down to each function's modules/lambda-function call, every variable
left at its default, and each entry of the function's ``environment`` worked out where it is a
setting (a number, a list, a switch). Entries that name a created resource (``TASKS_TABLE``,
``SCRAPE_QUEUE_URL``, ...) are not settings: the caller creates its resources and sets those itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any, Final

from outreach_dev import function_manifest, terraform_hcl

ROOT_MODULE: Final = "outreach-pipeline"

# Each function: the module calls from modules/outreach-pipeline down to its modules/lambda-function
# (functions.json's module_path).
FUNCTIONS: Final[Mapping[str, tuple[str, ...]]] = {
    name: function.module_path for name, function in function_manifest.FUNCTIONS.items()
}

_UNRESOLVED = (LookupError, ValueError, TypeError, AttributeError)


def _with_defaults(passed: Any, default: Any) -> Any:
    """A caller's value as the module sees it: null attributes take the module's optional defaults."""
    if passed is None:
        return default
    if isinstance(passed, dict) and isinstance(default, dict):
        return {**default, **{k: _with_defaults(v, default.get(k)) for k, v in passed.items()}}
    return passed


def _walk(value: Any, path: list[str]) -> Any:
    for key in path:
        if not isinstance(value, dict) or key not in value:
            raise LookupError(key)
        value = value[key]
    return value


class _Instance:
    """One module instance: its files, the arguments its caller passed, and that caller."""

    def __init__(self, module: str, arguments: Mapping[str, Any], caller: _Instance | None) -> None:
        self.directory = terraform_hcl.module_dir(module)
        self.document = terraform_hcl.load_module(self.directory)
        self.defaults = terraform_hcl.variable_defaults(self.directory)
        self.arguments = arguments
        self.caller = caller

    def call(self, name: str) -> Mapping[str, Any]:
        return dict(terraform_hcl.named(self.document, "module")[name])

    def child(self, name: str) -> _Instance:
        block = self.call(name)
        source = str(block["source"]).rstrip("/").rsplit("/", 1)[-1]
        return _Instance(source, block, self)

    def resolve(self, kind: str, dotted: str) -> Any:
        first, *rest = dotted.split(".")
        if kind == "var":
            if self.caller is None or first not in self.arguments:
                if first not in self.defaults:
                    raise LookupError(f"var.{first} has no default")
                return _walk(self.defaults[first], rest)
            # An object the caller spells out is walked as written, down to the attribute asked for.
            argument, default = self.arguments[first], self.defaults.get(first)
            while rest and isinstance(argument, dict) and rest[0] in argument:
                argument = argument[rest[0]]
                default = default.get(rest[0]) if isinstance(default, dict) else None
                rest = rest[1:]
            try:
                passed = self.caller.evaluate(argument)
            except _UNRESOLVED:
                passed = None  # the caller leaves it unset (null): the module's default holds
            value = _walk(_with_defaults(passed, default), rest)
            if value is None:
                raise LookupError(f"var.{dotted} is null")
            return value
        if kind == "local":
            return _walk(self.evaluate(terraform_hcl.named(self.document, "locals")[first]), rest)
        output, *rest = rest
        child = self.child(first)
        return _walk(child.evaluate(terraform_hcl.named(child.document, "output")[output]["value"]), rest)

    def evaluate(self, expression: Any) -> Any:
        return terraform_hcl.evaluate(expression, self.resolve)

    def environment(self, expression: Any) -> dict[str, str | None]:
        """An ``environment`` map: each entry's value, or None where it is no setting."""
        if isinstance(expression, dict):
            return {k: self._entry(v) for k, v in expression.items() if k != "__is_block__"}
        text = str(terraform_hcl.strip(expression)).strip()
        if text.startswith("merge(") and text.endswith(")"):
            merged: dict[str, str | None] = {}
            for part in terraform_hcl.split_top_level(text[len("merge(") : -1]):
                merged.update(self.environment(part))
            return merged
        if text.startswith("{") and text.endswith("}"):
            entries = terraform_hcl.split_top_level(text[1:-1])
            return {key.strip(): self._entry(value) for key, _, value in (e.partition("=") for e in entries)}
        reference = re.fullmatch(r"var\.(\w+)", text)
        if reference and self.caller is not None and reference[1] in self.arguments:
            return self.caller.environment(self.arguments[reference[1]])
        try:
            value = self.evaluate(text)
        except _UNRESOLVED:
            return {}
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}

    def _entry(self, expression: Any) -> str | None:
        try:
            value = self.evaluate(expression)
        except _UNRESOLVED:
            return None
        return None if isinstance(value, (dict, list)) else str(value)


@cache
def _environment(function: str) -> dict[str, str | None]:
    *path, call = FUNCTIONS[function]
    instance = _Instance(ROOT_MODULE, {}, None)
    for name in path:
        instance = instance.child(name)
    return instance.environment(instance.call(call)["environment"])


def variables(function: str) -> frozenset[str]:
    """Every environment variable Terraform sets on ``function`` (settings and resource names)."""
    return frozenset(_environment(function))


def settings(function: str) -> dict[str, str]:
    """The settings Terraform gives ``function`` with every module default, by variable name."""
    return {name: value for name, value in _environment(function).items() if value is not None}


def all_settings(*functions: str) -> dict[str, str]:
    """The settings of several functions in one environment; a later function's value wins."""
    merged: dict[str, str] = {}
    for function in functions or tuple(FUNCTIONS):
        merged.update(settings(function))
    return merged


def scrape_queue_attributes() -> dict[str, str]:
    """The scrape queue's ``VisibilityTimeout`` and redrive ``maxReceiveCount`` at the defaults of
    modules/scrape-pipeline (the caller adds the DLQ's ARN to build the ``RedrivePolicy``)."""
    queue = terraform_hcl.variable_defaults(terraform_hcl.module_dir("scrape-pipeline"))["queue"]
    return {
        "VisibilityTimeout": str(queue["visibility_timeout_seconds"]),
        "maxReceiveCount": str(queue["max_receive_count"]),
    }
