"""How many CPUs this process may really use: what thread counts default to (sam-serve's encoder, the benches).

``os.cpu_count()`` counts the machine's cores; a container limited to 2 CPUs on a 64-core node, or a process pinned
by ``taskset``, may use far fewer, and as many threads as cores there take turns on what the limit grants.
"""

from __future__ import annotations

import math
import os
from pathlib import Path


def cores(cgroup: Path = Path("/sys/fs/cgroup"), own: Path = Path("/proc/self/cgroup")) -> int:
    """The CPUs this process may use: its affinity mask (``taskset``, cpusets), capped by a cgroup CPU quota
    (``docker --cpus 2``, a Kubernetes CPU limit, a systemd slice's ``CPUQuota``) rounded up. A container on a
    64-core node limited to 2 CPUs sees 64 in its mask, and 64 encoder threads there take turns on 2 CPUs' worth
    of time."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        n = os.cpu_count() or 1
    quota = cpu_quota(cgroup, own)
    return max(1, min(n, math.ceil(quota))) if quota else n


def cpu_quota(cgroup: Path, own: Path = Path("/proc/self/cgroup")) -> float | None:
    """CPUs' worth of time this process's cgroups grant (quota / period), or None when unlimited or unreadable:
    the smallest quota from the process's own cgroup (``own``, /proc/self/cgroup) up to the hierarchy's root,
    since limits nest and on a host (no cgroup namespace) a limit sits on the process's sub-cgroup, not on the
    root. cgroup v2 ``cpu.max`` ("150000 100000", "max 100000"), else v1 ``cpu/cpu.cfs_quota_us`` (-1: none)."""
    v2 = (cgroup / "cgroup.controllers").exists() or (cgroup / "cpu.max").exists()
    root = cgroup if v2 else cgroup / "cpu"
    here = root / _own_cgroup(own, v2).strip("/")
    quotas = []
    while True:
        quota = _quota(here, v2)
        if quota is not None:
            quotas.append(quota)
        if here == root or root not in here.parents:
            break
        here = here.parent
    return min(quotas) if quotas else None


def _own_cgroup(own: Path, v2: bool) -> str:
    """This process's cgroup path in the v2 hierarchy ("0::/path"), or in the v1 hierarchy with the cpu controller
    ("4:cpu,cpuacct:/path"); "" (the root) when the file is unreadable (not Linux) or has no such line."""
    try:
        for line in own.read_text().splitlines():
            hierarchy, controllers, path = line.split(":", 2)
            if (hierarchy == "0" and not controllers) if v2 else "cpu" in controllers.split(","):
                return path
    except (OSError, ValueError):
        pass
    return ""


def _quota(folder: Path, v2: bool) -> float | None:
    """The quota one cgroup folder sets, or None (unlimited, no such files, unreadable)."""
    try:
        if v2:
            quota, period = (folder / "cpu.max").read_text().split()[:2]
        else:
            quota = (folder / "cpu.cfs_quota_us").read_text().strip()
            period = (folder / "cpu.cfs_period_us").read_text().strip()
        if quota in ("max", "-1"):
            return None
        return int(quota) / int(period) if int(quota) > 0 and int(period) > 0 else None
    except (OSError, ValueError):  # no cgroup file system (not Linux, a sandbox): the mask alone
        return None


__all__ = ["cores", "cpu_quota"]
