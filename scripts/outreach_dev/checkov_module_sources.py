"""Where each module call of a Terraform root comes from, so an offline checkov scan sees registry modules.

checkov loads local module folders itself, but a registry or Git module only through its own
download, which needs the network (its registry loader asks the registry for versions before it
looks on disk). After ``terraform init`` the modules are already in ``.terraform/modules``, listed
in ``modules.json`` by call path (``queue``, ``service.queue``). ``prepared_root`` copies the root,
points each such call at its downloaded folder, and names the calls whose source is not available
at all: checkov silently leaves their resources out, so the runner reports them instead of passing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

_MODULE_CALL = re.compile(r'^module\s+"(?P<name>[^"]+)"\s*\{', re.MULTILINE)
_SOURCE = re.compile(r'^(?P<indent>[ \t]*)source\s*=\s*"(?P<source>[^"]*)"[ \t]*$', re.MULTILINE)
_VERSION = re.compile(r"^[ \t]*version\s*=.*\n?", re.MULTILINE)
MODULES_JSON = Path(".terraform") / "modules" / "modules.json"


@dataclass(frozen=True)
class ModuleCall:
    """One ``module`` block: its call path as Terraform keys it, its source and where it is written."""

    key: str
    source: str
    file: Path

    @property
    def is_local(self) -> bool:
        return self.source.startswith(("./", "../"))


@dataclass
class PreparedRoot:
    """The directory checkov should scan, and the module calls whose source it cannot read."""

    directory: Path
    unavailable: list[ModuleCall] = field(default_factory=list)


def _block_end(text: str, start: int) -> int:
    """Index after the brace closing the block whose opening brace is at ``start - 1``."""
    depth, position = 1, start
    while position < len(text) and depth:
        char = text[position]
        if char == '"':
            position += 1
            while position < len(text) and text[position] != '"':
                position += 2 if text[position] == "\\" else 1
        elif char == "#" or text.startswith("//", position):
            newline = text.find("\n", position)
            position = len(text) if newline < 0 else newline
            continue
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        position += 1
    return position


def module_calls(directory: Path, prefix: str = "") -> list[ModuleCall]:
    """The module blocks of the ``.tf`` files of one folder, keyed below ``prefix``."""
    calls: list[ModuleCall] = []
    for tf_file in sorted(directory.glob("*.tf")):
        text = tf_file.read_text(encoding="utf-8")
        for match in _MODULE_CALL.finditer(text):
            body = text[match.end() : _block_end(text, match.end())]
            source = _SOURCE.search(body)
            if source is not None:
                calls.append(ModuleCall(prefix + match.group("name"), source.group("source"), tf_file))
    return calls


def downloaded_modules(root: Path) -> dict[str, Path]:
    """Module folders ``terraform init`` placed under the root, by call path (empty before init)."""
    listing = root / MODULES_JSON
    if not listing.is_file():
        return {}
    modules = json.loads(listing.read_text(encoding="utf-8")).get("Modules", [])
    return {
        str(entry["Key"]): (root / str(entry["Dir"])).resolve()
        for entry in modules
        if entry.get("Key") and entry.get("Dir")
    }


def _point_at(text: str, name: str, target: str) -> str:
    """``text`` with the source of ``module "<name>"`` replaced by ``target`` and its version dropped."""
    for match in _MODULE_CALL.finditer(text):
        if match.group("name") != name:
            continue
        end = _block_end(text, match.end())
        body = _VERSION.sub("", text[match.end() : end])
        body = _SOURCE.sub(lambda found: f'{found.group("indent")}source = "{target}"', body, count=1)
        return text[: match.end()] + body + text[end:]
    return text


@contextmanager
def prepared_root(root: Path) -> Iterator[PreparedRoot]:
    """The root as checkov should scan it; a temporary copy when downloaded modules must be wired in."""
    root = root.resolve()
    downloaded = downloaded_modules(root)
    rewrites: dict[Path, list[tuple[str, Path]]] = {}
    unavailable: list[ModuleCall] = []
    pending: list[tuple[Path, str]] = [(root, "")]
    visited: set[Path] = set()
    while pending:
        directory, prefix = pending.pop()
        if directory in visited:
            continue
        visited.add(directory)
        for call in module_calls(directory, prefix):
            if call.is_local and (call.file.parent / call.source).is_dir():
                pending.append(((call.file.parent / call.source).resolve(), call.key + "."))
            elif (
                not call.is_local
                and call.key in downloaded
                and call.file.is_relative_to(root)
                and downloaded[call.key].is_relative_to(root)
            ):
                rewrites.setdefault(call.file, []).append((call.key.rsplit(".", 1)[-1], downloaded[call.key]))
                pending.append((downloaded[call.key], call.key + "."))
            else:
                unavailable.append(call)
    if not rewrites:
        yield PreparedRoot(root, unavailable)
        return
    with tempfile.TemporaryDirectory(prefix="checkov-root-") as workspace:
        copy = Path(workspace) / root.name
        shutil.copytree(root, copy, symlinks=True, ignore=_not_scanned)
        for tf_file in copy.rglob("*.tf"):
            _localise(tf_file, root, copy, rewrites.get(root / tf_file.relative_to(copy), []))
        yield PreparedRoot(copy, unavailable)


def _not_scanned(directory: str, names: list[str]) -> set[str]:
    """Parts of a root a scan does not read: provider binaries and state under ``.terraform``, ``.git``."""
    ignored = {".git"} & set(names)
    if Path(directory).name == ".terraform":
        ignored |= {name for name in names if name != "modules"}
    return ignored


def _localise(tf_file: Path, root: Path, copy: Path, downloads: list[tuple[str, Path]]) -> None:
    """Point a copied file's module calls at downloaded folders and keep its local calls working."""
    text = tf_file.read_text(encoding="utf-8")
    original_dir = root / tf_file.parent.relative_to(copy)
    updated = text
    for name, folder in downloads:
        relative = os.path.relpath(copy / folder.relative_to(root), tf_file.parent)
        updated = _point_at(updated, name, relative if relative.startswith("../") else f"./{relative}")
    for call in module_calls(original_dir):
        target = (original_dir / call.source).resolve()
        if call.is_local and not target.is_relative_to(root):
            updated = _point_at(updated, call.key, str(target))  # a module outside the copied root
    if updated != text:
        tf_file.write_text(updated, encoding="utf-8")
