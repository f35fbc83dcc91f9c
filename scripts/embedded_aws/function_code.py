"""A function's code: the deployment zip the emulator stored, extracted for the host interpreter."""

from __future__ import annotations

import importlib.machinery
import io
import shutil
import tempfile
import zipfile
from pathlib import Path

from embedded_aws.runtime_records import FunctionSpec

_TAGGED_SUFFIXES = tuple(s for s in importlib.machinery.EXTENSION_SUFFIXES if s != ".so")


def _foreign_extension(name: str) -> bool:
    """A compiled module tagged for another interpreter (e.g. cpython-312 under 3.11)."""
    base = name.rsplit("/", 1)[-1]
    if not base.endswith(".so") or not (".cpython-" in base or ".abi3." in base):
        return False
    return not base.endswith(_TAGGED_SUFFIXES)


def extract_package(zip_bytes: bytes, target: Path) -> list[str]:
    """Extract a deployment package; returns top-level packages left to the host interpreter.

    A package built for the Lambda runtime (python3.12, manylinux) may hold compiled extensions for
    another interpreter than the one running locally; those top-level packages are not extracted so
    the host environment's build of the same distribution is imported instead.
    """
    with zipfile.ZipFile(io.BytesIO(zip_bytes)) as archive:
        names = archive.namelist()
        foreign = sorted({name.split("/", 1)[0] for name in names if _foreign_extension(name)})
        tmp = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
        for member in archive.infolist():
            top = member.filename.split("/", 1)[0]
            if top in foreign or (top.endswith(".libs") and top.split(".")[0] in foreign):
                continue
            archive.extract(member, tmp)
    try:
        tmp.rename(target)
    except OSError:  # extracted concurrently by another pool: keep the first copy
        shutil.rmtree(tmp, ignore_errors=True)
    return foreign


def moto_code_loader(spec: FunctionSpec) -> bytes:
    """The zip the in-process emulator stored for the function."""
    from moto.awslambda.models import lambda_backends

    function = lambda_backends[spec.account][spec.region].get_function(spec.name)
    return bytes(function.code_bytes)
