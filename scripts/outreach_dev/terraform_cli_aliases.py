"""Provider configuration aliases: the modules that take one from their caller, the roots that define one.

A module that lists ``configuration_aliases`` in its ``required_providers`` (``aws.receiving`` in
modules/email-inbound and modules/outreach-pipeline) gets those provider configurations from the
``providers`` argument of the module block that calls it: provider configurations are defined only in
a root module, and a module meant to be called contains no provider blocks
(https://developer.hashicorp.com/terraform/language/modules/develop/providers, "Provider Aliases
Within Modules"). Such a module is therefore not a complete configuration by itself: ``terraform
validate`` run in its directory has nobody to pass ``aws.receiving`` and reports "Provider
configuration not present" for each resource that uses it. ``terraform_cli`` reads
``configuration_aliases`` here to validate those modules only through their callers.

A root's aliased ``provider`` blocks matter to the override files that point a root at the embedded
AWS (``*_override.tf``, https://developer.hashicorp.com/terraform/language/files/override): an
override block merges into the block with the same provider name and alias, and Terraform refuses
one the root does not define ("Missing base provider configuration for override: ... An override
file can only override an aliased provider configuration that was already defined in a primary
configuration file"). So an override writes an aliased block exactly for the aliases the root has,
and an older revision without ``receiving.tf`` gets none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import hcl2

from outreach_dev import hcl_files

_OPTIONS = hcl2.SerializationOptions(strip_string_quotes=True, with_comments=False, explicit_blocks=False)


def _blocks(directory: Path, kind: str) -> list[Any]:
    """Every block of ``kind`` in the directory's .tf files, in file order."""
    found: list[Any] = []
    for path in sorted(directory.glob("*.tf")):
        blocks = hcl_files.load(path, _OPTIONS).get(kind, [])
        found.extend(blocks if isinstance(blocks, list) else [blocks])
    return found


def _reference(expression: Any) -> str:
    """``aws.receiving`` from python-hcl2's ``${aws.receiving}``."""
    text = str(expression)
    return text[2:-1] if text.startswith("${") and text.endswith("}") else text


def configuration_aliases(directory: Path) -> list[str]:
    """The provider configurations the module takes from its caller (``aws.receiving``): every
    ``configuration_aliases`` entry of its ``terraform { required_providers { ... } }``, in file
    order; empty for a module that uses only the default configurations it inherits."""
    aliases: list[str] = []
    for terraform in _blocks(directory, "terraform"):
        for required in terraform.get("required_providers", []):
            for requirement in required.values():
                if isinstance(requirement, dict):
                    aliases.extend(_reference(a) for a in requirement.get("configuration_aliases", []))
    return aliases


def provider_aliases(root: Path, provider: str = "aws") -> list[str]:
    """The aliases of the ``provider "<provider>"`` blocks ``root`` defines (``["receiving"]``),
    sorted; empty for a root with only the default configuration."""
    aliases = {
        str(body["alias"])
        for block in _blocks(root, "provider")
        for name, body in block.items()
        if name == provider and isinstance(body, dict) and "alias" in body
    }
    return sorted(aliases)
