"""Reading the SEMAPHORES section of `SHOW ENGINE INNODB STATUS` (pure: no Django, no I/O).

The spin and OS-wait figures explain throughput that stops growing with threads: threads
spinning on InnoDB's rw-locks, then sleeping in the OS wait array. The section changed
over the years; every form seen in real outputs is read:

- MySQL 8.0: `OS WAIT ARRAY INFO: reservation count N`, `... signal count N`,
  `RW-shared spins N, rounds N, OS waits N` (and RW-excl, RW-sx),
  `Spin rounds per wait: X RW-shared, Y RW-excl, Z RW-sx`;
- MySQL 5.5/5.6 and MariaDB before 10.6: one `OS WAIT ARRAY INFO` line with both counts,
  and `Mutex spin waits N, rounds N, OS waits N`;
- MariaDB 10.6 and later: an empty section (its new locks keep no such counts).

Every figure is cumulative since the server started, except the per-wait ratios.
"""

from __future__ import annotations

import re

_N = r"(\d+(?:\.\d+)?)"
_RESERVATION = re.compile(rf"reservation count {_N}")
_SIGNAL = re.compile(rf"signal count {_N}")
_SPINS = re.compile(
    rf"^(Mutex spin waits|RW-shared spins|RW-excl spins|RW-sx spins) {_N}, rounds {_N}, "
    rf"OS waits {_N}"
)
_PER_WAIT = re.compile(rf"{_N} (mutex|RW-shared|RW-excl|RW-sx)")
_KINDS = {
    "Mutex spin waits": "mutex",
    "RW-shared spins": "rw_shared",
    "RW-excl spins": "rw_excl",
    "RW-sx spins": "rw_sx",
    "mutex": "mutex",
    "RW-shared": "rw_shared",
    "RW-excl": "rw_excl",
    "RW-sx": "rw_sx",
}
_RULE = re.compile(r"^-{3,}$")


def semaphores_section(status: str) -> list[str]:
    """The lines between the SEMAPHORES title and the next section title."""
    lines = [line.rstrip() for line in status.splitlines()]
    try:
        start = lines.index("SEMAPHORES") + 1
    except ValueError:
        return []
    if start < len(lines) and _RULE.match(lines[start]):
        start += 1
    end = start
    while end < len(lines) and not _RULE.match(lines[end]):
        end += 1
    return lines[start:end]


def parse_semaphores(status: str) -> dict[str, float]:
    """Spin and OS-wait figures by name, e.g. `rw_shared_spins`, `os_wait_signal_count`,
    `rw_excl_spin_rounds_per_wait`; empty when the server prints none."""
    figures: dict[str, float] = {}
    for line in semaphores_section(status):
        if line.startswith("OS WAIT ARRAY INFO:"):
            _os_wait(line, figures)
        elif line.startswith("Spin rounds per wait:"):
            for value, kind in _PER_WAIT.findall(line):
                figures[f"{_KINDS[kind]}_spin_rounds_per_wait"] = float(value)
        else:
            m = _SPINS.match(line)
            if m:
                kind = _KINDS[m[1]]
                figures[f"{kind}_spins"] = float(m[2])
                figures[f"{kind}_rounds"] = float(m[3])
                figures[f"{kind}_os_waits"] = float(m[4])
    return figures


def _os_wait(line: str, figures: dict[str, float]) -> None:
    reservation = _RESERVATION.search(line)
    if reservation:
        figures["os_wait_reservation_count"] = float(reservation[1])
    signal = _SIGNAL.search(line)
    if signal:
        figures["os_wait_signal_count"] = float(signal[1])
