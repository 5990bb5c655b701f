"""How far a time per fsync may be from the one the server's own syncs took, when the
server did not time them itself: the sync probe's error, and the wait for a CPU on a
crowded host (runs/analysis/why/fsyncs.py carries the interval with each class's time;
runs/analysis/why/direction.py turns it into the interval of a predicted ratio). Pure.
"""

from __future__ import annotations

import math
from typing import Any

CROWDED = 1.5  # tasks ready to run per core beyond which the probe times the disk only
# The probe against strace on the server's own syncs, within the cores: within 25 % each
# run (docs/host-metrics.md), an error its interval carries.
PROBE_ACCURACY = 1.25
BASE_SLICE_MS = 0.75  # the kernel's scheduler slice (EEVDF's base_slice) on one core


def cpu_wait_ms(runq: Any, ncpu: Any) -> float:
    """How long a sync may wait for a CPU after its I/O on a host whose run queue passed
    CROWDED times its cores: a slice of the scheduler (0.75 ms x (1 + log2 cores), the
    kernel's scaling) for each task ready to run beyond the cores, per core. Measured
    against strace: a removed redo-log sync took 2.8 ms off each transaction at 5
    runnable on 2 cores where the probe read 0.57 ms (2.25 ms more allowed here); 1.80
    and 2.97 ms against 0.16 and 0.11 at 5.0 and 8.9 (2.25 and 5.2 ms allowed)."""
    if not (_positive(runq) and _positive(ncpu)) or runq <= CROWDED * ncpu:
        return 0.0
    slice_ms = BASE_SLICE_MS * (1 + math.floor(math.log2(min(ncpu, 8))))
    return (runq - ncpu) / ncpu * slice_ms


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and value > 0
