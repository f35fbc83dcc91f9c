"""An environment root's outputs as one flat {name: value}, however Terraform recorded them.

Each root under terraform/environments declares one output, ``pipeline`` (modules/outreach-pipeline
whole). The names every root shows at its top level (``alarm_topic_arn`` and the email stage's
``email_*``) are declared once, in that module's ``root_outputs`` object; :func:`flatten` lifts each
non-null one to the top level and leaves ``pipeline`` holding the module's other outputs. A null one
is left out, as ``terraform output -json`` leaves out a null output.

Terraform records outputs as ``{name: {"value": ..., "type": ..., "sensitive": ...}}`` in
``terraform output -json``, in a state file's ``outputs`` and in a plan's ``planned_values.outputs``
(where a value not known before apply has no ``value``); every reader of a root's outputs (the
operator CLI's targets, ``terraform_cli.apply_root`` and the tests that apply a root, the planned
root preflight reads) goes through :func:`flatten`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

PIPELINE = "pipeline"
ROOT_OUTPUTS = "root_outputs"


def _has_value(entry: Any) -> bool:
    return isinstance(entry, Mapping) and "value" in entry


def flatten(recorded: Mapping[str, Any]) -> dict[str, Any]:
    """{name: value} of Terraform's recorded outputs, the pipeline's ``root_outputs`` lifted."""
    outputs = {name: entry["value"] for name, entry in recorded.items() if _has_value(entry)}
    pipeline = outputs.get(PIPELINE)
    if isinstance(pipeline, Mapping) and isinstance(pipeline.get(ROOT_OUTPUTS), Mapping):
        remaining = dict(pipeline)
        lifted: Mapping[str, Any] = remaining.pop(ROOT_OUTPUTS)
        outputs[PIPELINE] = remaining
        for name, value in lifted.items():
            if value is not None:
                outputs.setdefault(name, value)
    return outputs


def from_json(text: str) -> dict[str, Any]:
    """The flat outputs of ``terraform output -json``'s text (empty text: no outputs)."""
    recorded = json.loads(text or "{}")
    return flatten(recorded)


def from_state(state: Mapping[str, Any]) -> dict[str, Any]:
    """The flat outputs a state document (a parsed ``*.tfstate``) recorded."""
    recorded = state.get("outputs", {})
    return flatten(recorded if isinstance(recorded, Mapping) else {})


def from_plan(plan: Mapping[str, Any]) -> dict[str, Any]:
    """The flat outputs a plan document (``terraform show -json``) knows before apply.

    ``planned_values`` has the outputs wholly known at plan time; ``pipeline`` holds ARNs that are
    not, so it is left out, but the known part of its ``root_outputs`` (``output_changes``' ``after``
    omits what is unknown) is lifted like the applied ones.
    """
    outputs = flatten(plan.get("planned_values", {}).get("outputs", {}))
    if PIPELINE not in outputs:
        after = (plan.get("output_changes", {}).get(PIPELINE) or {}).get("after")
        lifted = after.get(ROOT_OUTPUTS) if isinstance(after, Mapping) else None
        for name, value in (lifted if isinstance(lifted, Mapping) else {}).items():
            if value is not None:
                outputs.setdefault(name, value)
    return outputs
