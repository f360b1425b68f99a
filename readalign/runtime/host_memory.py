"""How much memory the host can still give this process.

Linux states it as ``MemAvailable`` in ``/proc/meminfo`` (free memory plus the
caches the kernel can drop); a cgroup v2 limit (a container, a batch
scheduler's job) can leave less, ``memory.max`` less ``memory.current``.
Elsewhere the OS's count of free pages stands in.
"""

from __future__ import annotations

import os

CGROUP = "/sys/fs/cgroup"
"""Where a cgroup v2 hierarchy shows this process's own group's limit and use."""


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_room() -> int | None:
    try:
        with open(os.path.join(CGROUP, "memory.max")) as fh:
            limit = fh.read().strip()
        with open(os.path.join(CGROUP, "memory.current")) as fh:
            used = int(fh.read().strip())
    except (OSError, ValueError):
        return None
    if limit == "max":
        return None
    return max(0, int(limit) - used)


def _free_pages() -> int | None:
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def available_memory() -> int | None:
    """Bytes of memory this process can still allocate, or None where the OS does not say."""
    found = [m for m in (_meminfo_available() or _free_pages(), _cgroup_room()) if m is not None]
    return min(found) if found else None
