"""A process's own peak resident memory: the high-water mark of its address space, not its rusage.

Linux keeps ``ru_maxrss`` across ``execve`` (getrusage(2), NOTES: "Resource usage metrics are
preserved across an execve(2)"), and on exec it is raised to the old address space's high-water mark.
Python starts a child with vfork (or fork) and exec, so a child's ``ru_maxrss`` starts at its parent's
peak: a command started from a bench holding the embedded AWS in its process reported the bench's
hundreds of MiB as its own. ``VmHWM`` in ``/proc/self/status`` (proc(5)) is the peak of the address
space exec gave the child, which is the command's alone.
"""

from __future__ import annotations

from pathlib import Path

_STATUS = Path("/proc/self/status")


def own_peak_rss_kib() -> int:
    """This process's peak resident memory in KiB since its last exec (``VmHWM``)."""
    for line in _STATUS.read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError(f"{_STATUS} has no VmHWM line")
