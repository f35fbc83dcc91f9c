"""`make package`: one deployment zip per Lambda function in ``dist/``.

The functions and what each zip holds come from ``modules/outreach-pipeline/functions.json`` (read
through ``function_manifest``): today every zip holds the ``outreach`` package and the project's
runtime dependencies installed for the Lambda platform (CPython 3.12 on manylinux2014 x86_64, binary
wheels only). boto3, botocore and s3transfer are left out: the python3.12 runtime provides them.

Every function gets its own zip although today they hold the same files: a function runs exactly
what its zip contains (the embedded AWS runs the handlers from these zips too), each function's
``source_code_hash`` follows its own artifact, and a function can gain a dependency without
touching the others. A shared dependency layer would shave a few megabytes per upload at the cost
of a second artifact per deploy and layer versions to keep in step; at these sizes it does not pay.

The zips are reproducible: entries sorted, every timestamp 1980-01-01 00:00, permissions 0644 or
0755, no ``__pycache__``/``.pyc``, no per-install pip metadata (RECORD, INSTALLER, REQUESTED,
direct_url.json) and no console-script launchers (their shebang names the build interpreter).
Building twice gives byte-identical zips. Functions whose zips hold the same files get the same bytes,
so a build compresses each set of files once and copies that zip to the other functions' names.

The installed dependency tree is cached under ``build/package-deps/`` by a hash of the requirement
list and the target platform, so only the first build downloads wheels. Direct dependencies are
pinned to the versions installed in the environment running the build (the versions the tests ran
against); delete the cache to pick up newer transitive releases. pip picks wheels for the target
(CPython 3.12) but evaluates environment markers with the interpreter running the build; the
runtime dependencies' markers (``python_version < "3.11"``/``"3.13"``) read the same on 3.11 and 3.12.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path

from outreach_dev import function_manifest

REPO = Path(__file__).resolve().parents[2]
SOURCE_DIR = REPO / "functions"
PYPROJECT = REPO / "pyproject.toml"
DIST_DIR = REPO / "dist"
CACHE_DIR = REPO / "build" / "package-deps"

PACKAGE = "outreach"

# Function name -> handler, from modules/outreach-pipeline/functions.json (Terraform reads the same
# file for the handlers it sets). The zip is dist/<name>.zip.
FUNCTIONS: Mapping[str, str] = {name: spec.handler for name, spec in function_manifest.FUNCTIONS.items()}

# The Lambda python3.12 runtime ships these; packaging them would only shadow the runtime's copy.
RUNTIME_PROVIDED = frozenset({"boto3", "botocore", "s3transfer"})

PLATFORM = "manylinux2014_x86_64"
PYTHON_VERSION = "3.12"
IMPLEMENTATION = "cp"

ZIP_DATE_TIME = (1980, 1, 1, 0, 0, 0)
FILE_MODE = 0o644
EXECUTABLE_MODE = 0o755

# Lambda's limits for a zip uploaded directly and for the unzipped function.
MAX_ZIP_BYTES = 50 * 1024 * 1024
MAX_UNZIPPED_BYTES = 250 * 1024 * 1024

_EXCLUDED_DIRS = frozenset({"__pycache__"})
_EXCLUDED_TOP_LEVEL = frozenset({"bin", ".complete"})  # pip's console-script launchers; the cache marker
_EXCLUDED_SUFFIXES = (".pyc", ".pyo")
_EXCLUDED_DIST_INFO_FILES = frozenset({"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"})
_COMPLETE_MARKER = ".complete"
# Held while one builder installs into the cache (install_dependencies); beside the trees, never in one.
_LOCK_FILE = ".install.lock"

Runner = Callable[[Sequence[str]], None]


class PackagingError(RuntimeError):
    """A package cannot be built as specified."""


@dataclass(frozen=True)
class BuiltPackage:
    function: str
    path: Path
    size: int
    sha256: str
    unzipped_size: int


def normalize(name: str) -> str:
    """PEP 503 name normalisation (``Aws_Lambda.Powertools`` -> ``aws-lambda-powertools``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def requirement_name(requirement: str) -> str:
    match = _REQUIREMENT_NAME.match(requirement)
    if match is None:
        raise PackagingError(f"cannot read a project name from requirement {requirement!r}")
    return normalize(match.group(1))


def runtime_requirements(pyproject: Path = PYPROJECT, *, pin_installed: bool = True) -> list[str]:
    """The project's runtime dependencies minus the runtime-provided ones, sorted.

    With ``pin_installed`` a dependency installed in the running environment is pinned to that
    version (``name==version``) so the zip carries what the tests ran against.
    """
    with pyproject.open("rb") as handle:
        project = tomllib.load(handle).get("project", {})
    requirements: list[str] = []
    for requirement in project.get("dependencies", []):
        name = requirement_name(requirement)
        if name in RUNTIME_PROVIDED:
            continue
        if pin_installed:
            try:
                requirements.append(f"{name}=={metadata.version(name)}")
                continue
            except metadata.PackageNotFoundError:
                pass
        requirements.append(requirement.strip())
    return sorted(requirements)


def cache_key(requirements: Sequence[str]) -> str:
    spec = {
        "requirements": sorted(requirements),
        "platform": PLATFORM,
        "python_version": PYTHON_VERSION,
        "implementation": IMPLEMENTATION,
        "excluded": sorted(RUNTIME_PROVIDED),
    }
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:20]


def _run_pip(args: Sequence[str]) -> None:
    completed = subprocess.run(list(args), capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise PackagingError(f"pip failed ({completed.returncode}):\n{completed.stdout}\n{completed.stderr}")


def pip_install_command(requirements: Sequence[str], target: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-compile",
        "--only-binary=:all:",
        "--platform",
        PLATFORM,
        "--implementation",
        IMPLEMENTATION,
        "--python-version",
        PYTHON_VERSION,
        "--target",
        str(target),
        *requirements,
    ]


def _remove_runtime_provided(tree: Path) -> None:
    """Drop boto3, botocore and s3transfer if a dependency pulled them in."""
    for entry in tree.iterdir():
        stem = entry.name.split("-")[0] if entry.name.endswith(".dist-info") else entry.name
        if normalize(stem) in RUNTIME_PROVIDED:
            if entry.is_dir():
                shutil.rmtree(entry)
            else:
                entry.unlink()


def install_dependencies(
    requirements: Sequence[str], cache_root: Path = CACHE_DIR, *, runner: Runner = _run_pip
) -> Path:
    """Install ``requirements`` for the Lambda platform once; later calls reuse the cached tree.

    Builders running at once (the test workers, ``make bench-smoke`` beside ``make pytest``) share
    the cache: the first takes ``cache_root``'s lock and installs, the others wait for the lock and
    then find the tree complete. No builder ever replaces a complete tree another may be reading.
    """
    target = cache_root / f"deps-{cache_key(requirements)}"
    if (target / _COMPLETE_MARKER).is_file():
        return target
    cache_root.mkdir(parents=True, exist_ok=True)
    with _locked(cache_root / _LOCK_FILE):
        if (target / _COMPLETE_MARKER).is_file():
            return target
        _install_into(requirements, cache_root, target, runner)
    return target


def _locked(path: Path) -> contextlib.AbstractContextManager[None]:
    """An exclusive lock on ``path`` (flock, held until the block ends, released if the process dies)."""

    @contextlib.contextmanager
    def hold() -> Iterator[None]:
        with path.open("a") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    return hold()


def _install_into(requirements: Sequence[str], cache_root: Path, target: Path, runner: Runner) -> None:
    """Install into a staging directory, then move it to ``target`` (an incomplete leftover replaced)."""
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=cache_root))
    try:
        if requirements:
            runner(pip_install_command(requirements, staging))
        _remove_runtime_provided(staging)
        (staging / _COMPLETE_MARKER).write_text("\n".join(sorted(requirements)) + "\n")
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def _included(relative: Path) -> bool:
    parts = relative.parts
    if parts[0] in _EXCLUDED_TOP_LEVEL or any(part in _EXCLUDED_DIRS for part in parts[:-1]):
        return False
    if relative.suffix in _EXCLUDED_SUFFIXES:
        return False
    return not (len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] in _EXCLUDED_DIST_INFO_FILES)


def tree_entries(root: Path, prefix: str = "") -> dict[str, Path]:
    """Archive name -> file for every file under ``root`` that belongs in a zip."""
    entries: dict[str, Path] = {}
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        relative = path.relative_to(root)
        if _included(relative):
            entries[f"{prefix}{relative.as_posix()}"] = path
    return entries


def source_entries(source_dir: Path = SOURCE_DIR, package: str = PACKAGE) -> dict[str, Path]:
    """A package's files (the ``outreach`` package by default), named as they sit at the zip root."""
    package_dir = source_dir / package
    if not (package_dir / "__init__.py").is_file():
        raise PackagingError(f"{package_dir} is not a Python package")
    return tree_entries(package_dir, prefix=f"{package}/")


def check_handler(entries: Mapping[str, Path], handler: str) -> None:
    module = handler.rsplit(".", 1)[0].replace(".", "/")
    if f"{module}.py" not in entries and f"{module}/__init__.py" not in entries:
        raise PackagingError(f"handler {handler}: module {module}.py is not in the package")


def _mode(path: Path) -> int:
    return EXECUTABLE_MODE if path.stat().st_mode & stat.S_IXUSR else FILE_MODE


def write_zip(entries: Mapping[str, Path], destination: Path) -> BuiltPackage:
    """Write ``entries`` as a reproducible zip: sorted, fixed timestamps and permissions."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    partial = destination.with_name(f".{destination.name}.partial")
    unzipped = 0
    with zipfile.ZipFile(partial, "w") as archive:
        for name in sorted(entries):
            path = entries[name]
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE_TIME)
            info.create_system = 3  # Unix, so external_attr carries the permission bits
            info.external_attr = (stat.S_IFREG | _mode(path)) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            data = path.read_bytes()
            unzipped += len(data)
            archive.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
    partial.replace(destination)
    return BuiltPackage(
        function=destination.stem,
        path=destination,
        size=destination.stat().st_size,
        sha256=hashlib.sha256(destination.read_bytes()).hexdigest(),
        unzipped_size=unzipped,
    )


def copy_zip(package: BuiltPackage, destination: Path) -> BuiltPackage:
    """``package``'s zip under another name: the bytes ``write_zip`` gives the same entries (a zip
    does not hold its own file name), without compressing them again."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    partial = destination.with_name(f".{destination.name}.partial")
    shutil.copyfile(package.path, partial)
    partial.replace(destination)
    return replace(package, function=destination.stem, path=destination)


def _check_limits(package: BuiltPackage) -> None:
    if package.size > MAX_ZIP_BYTES:
        raise PackagingError(f"{package.path}: {package.size} bytes exceeds Lambda's 50 MB zip limit")
    if package.unzipped_size > MAX_UNZIPPED_BYTES:
        raise PackagingError(f"{package.path}: {package.unzipped_size} bytes unzipped exceeds 250 MB")


def build_packages(
    functions: Iterable[str] | None = None,
    *,
    dist_dir: Path = DIST_DIR,
    cache_root: Path = CACHE_DIR,
    source_dir: Path = SOURCE_DIR,
    requirements: Sequence[str] | None = None,
    runner: Runner = _run_pip,
) -> list[BuiltPackage]:
    """Build dist/<function>.zip for each function (all of FUNCTIONS by default): the package and,
    where the manifest says so, the runtime dependencies."""
    names = sorted(FUNCTIONS if functions is None else set(functions))
    unknown = [name for name in names if name not in FUNCTIONS]
    if unknown:
        raise PackagingError(f"unknown functions {unknown}; known: {sorted(FUNCTIONS)}")
    specs = [function_manifest.FUNCTIONS[name] for name in names]
    dependencies: dict[str, Path] = {}
    if any(spec.runtime_dependencies for spec in specs):
        reqs = runtime_requirements() if requirements is None else list(requirements)
        dependencies = tree_entries(install_dependencies(reqs, cache_root, runner=runner))
    code = {package: source_entries(source_dir, package) for package in sorted({s.package for s in specs})}
    built: list[BuiltPackage] = []
    # Functions whose zips hold the same files get the same bytes: each set of files is compressed once.
    written: dict[tuple[tuple[str, Path], ...], BuiltPackage] = {}
    for spec in specs:
        name = spec.name
        package_code = code[spec.package]
        shared = dependencies if spec.runtime_dependencies else {}
        clash = sorted(entry for entry in package_code if entry in shared)
        if clash:
            raise PackagingError(f"dependencies install files of the {spec.package} package: {clash[:5]}")
        entries = {**shared, **package_code}
        check_handler(entries, FUNCTIONS[name])
        key = tuple(sorted(entries.items()))
        destination = dist_dir / f"{name}.zip"
        package = copy_zip(written[key], destination) if key in written else write_zip(entries, destination)
        written.setdefault(key, package)
        _check_limits(package)
        built.append(package)
    return built


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "functions", nargs="*", help=f"functions to package (default: {', '.join(FUNCTIONS)})"
    )
    parser.add_argument("--dist", type=Path, default=DIST_DIR, help="output directory (default: dist/)")
    parser.add_argument("--cache", type=Path, default=CACHE_DIR, help="dependency cache directory")
    args = parser.parse_args(argv)
    try:
        built = build_packages(args.functions or None, dist_dir=args.dist, cache_root=args.cache)
    except PackagingError as exc:
        print(f"make package: {exc}", file=sys.stderr)
        return 1
    for package in built:
        shown = os.path.relpath(package.path) if package.path.is_relative_to(Path.cwd()) else package.path
        print(
            f"{shown}  {package.size:>11,} bytes ({package.size / 1048576:.1f} MiB, "
            f"{package.unzipped_size / 1048576:.1f} MiB unzipped)  sha256 {package.sha256}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
