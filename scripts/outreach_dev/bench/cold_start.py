"""Cold start: each handler's import time from its built zip in a fresh interpreter, against ``import boto3``.

Lambda's init phase imports the handler module; the runtime provides boto3, so ``import boto3`` alone
is what every function pays anyway and is the baseline, measured in the same run the same way. Each
zip from ``outreach_dev.packaging`` is unpacked, and each handler imported ``runs`` times in a new
interpreter (median), with bytecode writing off as on Lambda's read-only ``/var/task``:

- as built (sources only: every cold start compiles them);
- with bytecode compiled into the tree by ``py_compile`` in ``unchecked-hash`` mode, which keeps a
  zip reproducible (no source timestamps in the ``.pyc``) and skips the source check on import.
  https://docs.python.org/3/library/py_compile.html#py_compile.PycInvalidationMode

Bytecode is specific to the interpreter's minor version: the local interpreter compiles and imports
here; for Lambda the zip would have to be compiled by the runtime's Python (3.12). The child also
reports which third-party packages each handler loaded, and how many of the zip's bytes those are.
"""

from __future__ import annotations

import compileall
import hashlib
import json
import os
import py_compile
import statistics
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from embedded_aws.runtime import extract_package
from outreach_dev import packaging
from outreach_dev.bench.report import Figure, MeasurementError, Section

_CHILD = """
import json, sys, time
began = time.perf_counter()
import {module}
seconds = time.perf_counter() - began
loaded = sorted({{name.split(".")[0] for name in sys.modules}} - set(sys.stdlib_module_names))
print(json.dumps({{"seconds": seconds, "loaded": loaded}}))
"""
_ENV = {
    "POWERTOOLS_SERVICE_NAME": "outreach-bench",
    "POWERTOOLS_METRICS_NAMESPACE": "OutreachBench",
    "AWS_DEFAULT_REGION": "eu-central-1",
    "PYTHONDONTWRITEBYTECODE": "1",
}
# Packages the dispatcher and the reconciler never call (they move task ids, they do not fetch pages).
# certifi is not among them: botocore loads it itself whenever it is installed.
SCRAPING_ONLY = frozenset({"httpx", "httpcore", "selectolax", "protego", "webencodings", "idna"})


def _boto3_path() -> str:
    import boto3

    return str(Path(boto3.__file__).resolve().parents[1])


def _import_once(tree: Path, module: str) -> dict[str, Any]:
    env = {**_ENV, "PYTHONPATH": f"{tree}{os.pathsep}{_boto3_path()}", "PATH": os.environ.get("PATH", "")}
    done = subprocess.run(
        [sys.executable, "-S", "-c", _CHILD.format(module=module)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise MeasurementError(f"import {module} from {tree.name} failed: {done.stderr.strip()[-300:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _median_import(tree: Path, module: str, runs: int) -> tuple[float, list[str]]:
    results = [_import_once(tree, module) for _ in range(runs)]
    return statistics.median(r["seconds"] for r in results), list(results[-1]["loaded"])


def _compile(tree: Path) -> None:
    ok = compileall.compile_dir(
        str(tree),
        quiet=1,
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        workers=1,
    )
    if not ok:
        raise MeasurementError(f"compiling {tree} to bytecode failed")


def _deterministic_zip(tree: Path, destination: Path) -> str:
    """Zip ``tree`` as the packaging does (sorted, fixed timestamps and modes); its sha256."""
    with zipfile.ZipFile(destination, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in tree.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(path.relative_to(tree).as_posix(), date_time=packaging.ZIP_DATE_TIME)
            info.external_attr = (0o100000 | packaging.FILE_MODE) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, path.read_bytes())
    return hashlib.sha256(destination.read_bytes()).hexdigest()


def _top_levels(package: Path) -> set[str]:
    with zipfile.ZipFile(package) as archive:
        return {name.split("/", 1)[0] for name in archive.namelist() if "." not in name.split("/", 1)[0]}


def _unzipped_bytes(package: Path, packages: set[str] | None = None) -> int:
    """Unzipped bytes of the zip's entries (of those under one of ``packages``, if given)."""
    with zipfile.ZipFile(package) as archive:
        return sum(
            info.file_size
            for info in archive.infolist()
            if packages is None or info.filename.split("/", 1)[0].split(".")[0].split("-")[0] in packages
        )


def run(runs: int, functions: Sequence[str] | None = None) -> Section:
    """Measure the cold start of ``functions`` (every one by default)."""
    section = Section("cold start", details={"runs": runs, "handlers": {}})
    with tempfile.TemporaryDirectory(prefix="outreach-bench-cold-") as scratch:
        root = Path(scratch)
        built = packaging.build_packages(functions, dist_dir=root / "dist")
        boto3_alone, _ = _median_import(root, "boto3", runs)
        section.details["import_boto3_seconds"] = boto3_alone
        for package in built:
            name = package.path.stem
            module = packaging.FUNCTIONS[name].rsplit(".", 1)[0]
            plain, compiled = root / name / "plain", root / name / "compiled"
            data = package.path.read_bytes()
            for tree in (plain, compiled):
                tree.parent.mkdir(parents=True, exist_ok=True)
                # Compiled extensions built for the runtime's Python are left to this interpreter's copy.
                host_provided = extract_package(data, tree)
            _compile(compiled)
            first = _deterministic_zip(compiled, root / f"{name}-bytecode-1.zip")
            second = _deterministic_zip(compiled, root / f"{name}-bytecode-2.zip")
            plain_seconds, seen = _median_import(plain, module, runs)
            # Only what the zip or the runtime holds (the host may add optional extras, e.g. httpx's CLI).
            loaded = sorted(set(seen) & (_top_levels(package.path) | packaging.RUNTIME_PROVIDED))
            compiled_seconds, _ = _median_import(compiled, module, runs)
            total = _unzipped_bytes(package.path)
            needed = _unzipped_bytes(package.path, {*loaded, "outreach"})
            unneeded = sorted(SCRAPING_ONLY & set(loaded)) if name != "scraper" else []
            section.details["handlers"][name] = {
                "import_seconds": plain_seconds,
                "import_seconds_bytecode": compiled_seconds,
                "zip_bytes": package.size,
                "zip_bytes_bytecode": (root / f"{name}-bytecode-1.zip").stat().st_size,
                "bytecode_zip_reproducible": first == second,
                "third_party_loaded": loaded,
                "loaded_but_not_needed": unneeded,
                "imported_from_the_host_interpreter": host_provided,
                "unzipped_bytes": total,
                "unzipped_bytes_of_loaded_packages": needed,
            }
            section.add(
                Figure(
                    f"{name}: import, sources only (ms)",
                    plain_seconds * 1e3,
                    "ms",
                    baseline=boto3_alone * 1e3,
                )
            )
            section.add(
                Figure(
                    f"{name}: import, with bytecode (ms)",
                    compiled_seconds * 1e3,
                    "ms",
                    baseline=boto3_alone * 1e3,
                )
            )
            section.add(Figure(f"{name}: zip size (MiB)", package.size / 2**20, "MiB"))
            section.add(
                Figure(
                    f"{name}: zip size with bytecode (MiB)",
                    (root / f"{name}-bytecode-1.zip").stat().st_size / 2**20,
                    "MiB",
                    baseline=package.size / 2**20,
                )
            )
            section.add(Figure(f"{name}: share of unzipped bytes it loads", needed / total, "share"))
            if first != second:
                raise MeasurementError(f"{name}: two bytecode zips of the same tree differ")
    return section
