"""`make package`: one reproducible zip per function, built for the Lambda platform."""

from __future__ import annotations

import hashlib
import stat
import threading
import zipfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from outreach_dev import function_manifest, packaging


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def two_builds(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[packaging.BuiltPackage], ...]:
    """Build every function twice into separate directories, sharing the dependency cache."""
    first = packaging.build_packages(dist_dir=tmp_path_factory.mktemp("first"))
    second = packaging.build_packages(dist_dir=tmp_path_factory.mktemp("second"))
    return first, second


@pytest.fixture(scope="module")
def scraper_zip(two_builds: tuple[list[packaging.BuiltPackage], ...]) -> zipfile.ZipFile:
    built = {p.function: p for p in two_builds[0]}
    return zipfile.ZipFile(built["scraper"].path)


def test_building_twice_gives_byte_identical_zips(
    two_builds: tuple[list[packaging.BuiltPackage], ...],
) -> None:
    # GIVEN two builds of every function from the same sources and cached dependencies
    first, second = two_builds
    # THEN every function's zip has the same sha256 both times
    assert [p.function for p in first] == sorted(packaging.FUNCTIONS)
    assert {p.function: _sha256(p.path) for p in first} == {p.function: _sha256(p.path) for p in second}
    assert all(p.sha256 == _sha256(p.path) for p in first)


def test_entries_are_sorted_with_fixed_timestamps_and_permissions(scraper_zip: zipfile.ZipFile) -> None:
    infos = scraper_zip.infolist()
    names = [info.filename for info in infos]
    assert names == sorted(names)
    assert {info.date_time for info in infos} == {packaging.ZIP_DATE_TIME}
    assert {stat.S_IMODE(info.external_attr >> 16) for info in infos} <= {0o644, 0o755}
    assert all(stat.S_ISREG(info.external_attr >> 16) for info in infos)


def test_zip_leaves_out_bytecode_install_records_launchers_and_the_runtime_sdk(
    scraper_zip: zipfile.ZipFile,
) -> None:
    names = scraper_zip.namelist()
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".pyo"))]
    assert not [
        n for n in names if n.split("/")[-1] in {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}
    ]
    assert not [n for n in names if n.startswith("bin/")]
    top_level = {n.split("/")[0].split("-")[0] for n in names}
    assert not top_level & {"boto3", "botocore", "s3transfer"}


def test_no_zip_carries_the_command_line_or_other_tooling(
    two_builds: tuple[list[packaging.BuiltPackage], ...],
) -> None:
    # GIVEN the operator's command line installed beside the Lambda code (outreach_operator.cli, click, rich)
    from outreach_operator.cli import app

    assert app.main is not None
    # THEN no function's zip holds the tooling package or the command line's own dependencies
    for package in two_builds[0]:
        names = zipfile.ZipFile(package.path).namelist()
        top_level = {n.split("/")[0] for n in names}
        assert not [
            n for n in names if n.startswith(("outreach_dev/", "outreach_operator/", "embedded_aws/"))
        ], package.function
        assert not top_level & {"click", "rich", "outreach_dev", "outreach_operator", "embedded_aws"}, (
            package.function
        )
        assert "outreach/task_store/__init__.py" in names


def test_zip_holds_the_handlers_and_dependencies_built_for_cpython_312_on_linux(
    scraper_zip: zipfile.ZipFile,
) -> None:
    names = set(scraper_zip.namelist())
    assert {"outreach/__init__.py", "outreach/dispatcher.py", "outreach/scraper.py"} <= names
    assert {"aws_lambda_powertools/__init__.py", "httpx/__init__.py", "selectolax/__init__.py"} <= names
    extensions = [n for n in names if n.endswith(".so")]
    assert extensions
    assert all("cpython-312-x86_64-linux-gnu" in n or ".abi3." in n for n in extensions)


def test_every_function_gets_its_own_zip_with_its_handler(
    two_builds: tuple[list[packaging.BuiltPackage], ...],
) -> None:
    for package in two_builds[0]:
        assert package.path.name == f"{package.function}.zip"
        module = packaging.FUNCTIONS[package.function].rsplit(".", 1)[0].replace(".", "/") + ".py"
        assert module in zipfile.ZipFile(package.path).namelist()
        assert package.size < packaging.MAX_ZIP_BYTES


def test_each_zip_with_the_contact_parsing_dependencies_stays_under_5_mb(
    two_builds: tuple[list[packaging.BuiltPackage], ...],
) -> None:
    # phonenumbers ships as its lite build (no geocoder, carrier or time-zone data) to stay inside
    # the project's 5 MB budget for a compressed function zip
    for package in two_builds[0]:
        names = zipfile.ZipFile(package.path).namelist()
        assert any(name.startswith("phonenumbers/") for name in names)
        assert any(name.startswith("tldextract/") for name in names)
        assert not any(name.startswith("phonenumbers/geodata/") for name in names)
        assert package.size < 5_000_000


def test_dependency_tree_is_installed_once_per_requirement_list(tmp_path: Path) -> None:
    # GIVEN a pip stand-in that records its calls and installs one module
    calls: list[list[str]] = []

    def fake_pip(args: Sequence[str]) -> None:
        calls.append(list(args))
        target = Path(args[args.index("--target") + 1])
        (target / "dep.py").write_text("VALUE = 1\n")

    # WHEN the same requirement list is installed twice, then a different one
    first = packaging.install_dependencies(["dep==1.0"], tmp_path, runner=fake_pip)
    again = packaging.install_dependencies(["dep==1.0"], tmp_path, runner=fake_pip)
    other = packaging.install_dependencies(["dep==2.0"], tmp_path, runner=fake_pip)

    # THEN pip ran once per distinct list, and the second call reused the cached tree
    assert first == again != other
    assert len(calls) == 2
    assert (first / "dep.py").is_file()
    assert calls[0][calls[0].index("--platform") + 1] == "manylinux2014_x86_64"
    assert calls[0][calls[0].index("--python-version") + 1] == "3.12"
    assert "--only-binary=:all:" in calls[0]


def test_runtime_requirements_drop_the_sdk_the_runtime_provides(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "x"\nversion = "0"\n'
        'dependencies = ["boto3>=1.34", "botocore", "s3transfer>=0.10",'
        ' "httpx>=0.27", "Some_Lib[extra]>=1"]\n'
    )
    assert packaging.runtime_requirements(pyproject, pin_installed=False) == [
        "Some_Lib[extra]>=1",
        "httpx>=0.27",
    ]


def test_runtime_requirements_pin_the_versions_the_tests_ran_against() -> None:
    requirements = packaging.runtime_requirements()
    assert all("==" in r for r in requirements)
    assert not {packaging.requirement_name(r) for r in requirements} & packaging.RUNTIME_PROVIDED


def test_a_function_whose_handler_module_is_missing_is_not_packaged(tmp_path: Path) -> None:
    # GIVEN a source tree whose outreach package has no dispatcher module
    source = tmp_path / "functions"
    (source / "outreach").mkdir(parents=True)
    (source / "outreach" / "__init__.py").write_text("")
    (source / "outreach" / "scraper.py").write_text("def lambda_handler(event, context): ...\n")
    # WHEN the dispatcher is packaged THEN the build fails naming the handler
    with pytest.raises(packaging.PackagingError, match=r"outreach\.dispatcher\.lambda_handler"):
        packaging.build_packages(
            ["dispatcher"],
            dist_dir=tmp_path / "dist",
            cache_root=tmp_path / "cache",
            source_dir=source,
            requirements=[],
        )


def test_make_package_prints_each_zip_with_size_and_sha256(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert packaging.main(["scraper", "--dist", str(tmp_path)]) == 0
    line = capsys.readouterr().out.strip()
    digest = _sha256(tmp_path / "scraper.zip")
    assert "scraper.zip" in line
    assert f"{(tmp_path / 'scraper.zip').stat().st_size:,} bytes" in line
    assert line.endswith(f"sha256 {digest}")


def test_the_packaged_functions_and_handlers_are_the_manifests() -> None:
    handlers = {name: f.handler for name, f in function_manifest.FUNCTIONS.items()}
    assert handlers == packaging.FUNCTIONS


def test_a_function_the_manifest_packages_without_dependencies_gets_its_code_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a manifest whose scraper zip holds the outreach package without the runtime dependencies
    scraper = replace(function_manifest.FUNCTIONS["scraper"], runtime_dependencies=False)
    monkeypatch.setattr(function_manifest, "FUNCTIONS", {"scraper": scraper})
    installs: list[Sequence[str]] = []
    # WHEN it is packaged
    (package,) = packaging.build_packages(
        ["scraper"], dist_dir=tmp_path / "dist", cache_root=tmp_path / "cache", runner=installs.append
    )
    # THEN nothing is installed and every entry is the outreach package's
    names = zipfile.ZipFile(package.path).namelist()
    assert installs == []
    assert "outreach/scraper.py" in names
    assert all(name.startswith("outreach/") for name in names)


def test_builders_installing_into_one_cache_at_once_install_once_and_keep_the_tree_whole(
    tmp_path: Path,
) -> None:
    # GIVEN a builder whose pip install is under way when a second builder wants the same tree
    cache = tmp_path / "cache"
    installs: list[Sequence[str]] = []
    trees: list[Path] = []
    second = threading.Thread(
        target=lambda: trees.append(packaging.install_dependencies(["a==1"], cache, runner=pip))
    )

    def pip(command: Sequence[str]) -> None:
        installs.append(command)
        if len(installs) == 1:
            # the second builder starts while the first installs, and gets its chance to run
            second.start()
            second.join(timeout=2.0)
        target = Path(command[command.index("--target") + 1])
        (target / "a").mkdir()
        (target / "a" / "__init__.py").write_text("")

    # WHEN both finish
    first = packaging.install_dependencies(["a==1"], cache, runner=pip)
    second.join(timeout=60.0)
    # THEN pip ran once, both got the same tree, and the tree is whole
    assert not second.is_alive()
    assert len(installs) == 1
    assert trees == [first]
    assert (first / "a" / "__init__.py").is_file()
