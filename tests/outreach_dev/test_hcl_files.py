"""Files loaded with python-hcl2 from several threads at once read as a lone load reads them
(outreach_dev.hcl_files)."""

from __future__ import annotations

import threading
from pathlib import Path

import hcl2

from outreach_dev import hcl_files, terraform_cli

OPTIONS = hcl2.SerializationOptions(strip_string_quotes=True, with_comments=False, explicit_blocks=False)
# terraform_cli's pool runs 4 checks at once; more threads make an overlap likelier.
THREADS = 6
PASSES = 3


def test_loads_from_several_threads_at_once_read_each_file_as_a_lone_load() -> None:
    # GIVEN a module's files, each read alone (this module takes configuration_aliases)
    files: list[Path] = sorted((terraform_cli.MODULES_DIR / "outreach-pipeline").glob("*.tf"))
    alone = {path: hcl_files.load(path, OPTIONS) for path in files}
    differing: list[str] = []

    def read() -> None:
        for _ in range(PASSES):
            differing.extend(p.name for p in files if hcl_files.load(p, OPTIONS) != alone[p])

    # WHEN several threads read them over and over at the same time
    threads = [threading.Thread(target=read) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # THEN every read equals the lone one
    assert differing == []
