"""How a machine is tuned for a benchmark, as its facts say it: the CPU frequency governor
of each core, and each network card's link, queues and interrupts (which CPUs may take
them, which took them). Read from /sys and /proc, the same way on every host: the local
executor reads the files itself (`tuning_text`), the SSH executor runs TUNING_SCRIPT there;
both give one text, `tuning_facts` reads it. What cannot be read is said, never guessed.

The text, one line each: `F\t<path>\t<first line of the file>`, `L\t<path>\t<the name its
symbolic link points to>`, `I\t<a line of /proc/interrupts>`.
"""

from __future__ import annotations

import glob
import os
import re
from collections import Counter

GOVERNORS = "/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor"
NET = "/sys/class/net"
FILES = (
    GOVERNORS,
    f"{NET}/*/operstate",
    f"{NET}/*/speed",
    f"{NET}/*/queues/rx-*/rps_cpus",
    f"{NET}/*/queues/tx-*/tx_timeout",
    "/proc/irq/[0-9]*/smp_affinity_list",
)
LINKS = (f"{NET}/*/device", f"{NET}/*/device/driver")

# The same reading on a load host over SSH (runs/loadhosts/remote_scripts.py runs it).
TUNING_SCRIPT = r"""
for f in {files}; do
  [ -r "$f" ] && v=$(head -n 1 "$f" 2>/dev/null) && printf 'F\t%s\t%s\n' "$f" "$v"
done
for l in {links}; do
  [ -L "$l" ] && t=$(readlink "$l") && printf 'L\t%s\t%s\n' "$l" "${{t##*/}}"
done
[ -r /proc/interrupts ] && sed 's/^/I\t/' /proc/interrupts
exit 0
""".format(files=" ".join(FILES), links=" ".join(LINKS))

CPU = re.compile(r"/cpu(\d+)/cpufreq/scaling_governor$")
NO_GOVERNOR = (
    "unavailable: the kernel exposes no cpufreq governor "
    "(/sys/devices/system/cpu/cpu*/cpufreq): a virtual machine, or no frequency driver"
)


def tuning_text() -> str:
    """This machine's files, read here, in the text TUNING_SCRIPT prints."""
    lines = []
    for pattern in FILES:
        for path in sorted(glob.glob(pattern)):
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    first = f.readline().strip()
            except OSError:
                continue  # `speed` of a link that is down: EINVAL
            lines.append(f"F\t{path}\t{first}")
    for pattern in LINKS:
        for path in sorted(glob.glob(pattern)):
            if os.path.islink(path):
                lines.append(f"L\t{path}\t{os.path.basename(os.readlink(path))}")
    try:
        with open("/proc/interrupts", encoding="utf-8", errors="replace") as f:
            lines += [f"I\t{line.rstrip()}" for line in f]
    except OSError:
        pass
    return "\n".join(lines) + "\n"


def tuning_facts(text: str) -> dict[str, object]:
    """The facts of a reading (see the module's docstring): `cpu_governor` and `network`,
    each a sentence, or "unavailable: why"."""
    files: dict[str, str] = {}
    links: dict[str, str] = {}
    interrupts: list[str] = []
    for line in text.splitlines():
        kind, _, rest = line.partition("\t")
        if kind == "I":
            interrupts.append(rest)
            continue
        path, _, value = rest.partition("\t")
        (files if kind == "F" else links if kind == "L" else {})[path] = value.strip()
    return {"cpu_governor": _governor(files), "network": _network(files, links, interrupts)}


def _governor(files: dict[str, str]) -> str:
    by_cpu = {int(m.group(1)): v for p, v in files.items() if (m := CPU.search(p)) and v}
    if not by_cpu:
        return NO_GOVERNOR
    counts = Counter(by_cpu.values())
    if len(counts) == 1:
        governor = next(iter(counts))
        return f"{governor} (all {len(by_cpu)} CPUs)"
    return ", ".join(
        f"{g} on CPU {_cpu_list(sorted(c for c, v in by_cpu.items() if v == g))}"
        for g, _n in counts.most_common()
    )


def _cpu_list(cpus: list[int]) -> str:
    """0,1,2,5 as 0-2,5."""
    spans: list[list[int]] = []
    for cpu in cpus:
        if spans and cpu == spans[-1][1] + 1:
            spans[-1][1] = cpu
        else:
            spans.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def _network(files: dict[str, str], links: dict[str, str], interrupts: list[str]) -> str:
    """Each card with a device (lo, bridges and other virtual interfaces have none)."""
    cards = sorted(
        path.split("/")[4] for path in links if path.endswith("/device") and path.count("/") == 5
    )
    if not cards:
        return "unavailable: no network card in /sys/class/net (only virtual interfaces)"
    return "; ".join(_card(name, files, links, interrupts) for name in cards)


def _card(name: str, files: dict[str, str], links: dict[str, str], interrupts: list[str]) -> str:
    base = f"{NET}/{name}"
    speed = files.get(f"{base}/speed", "")
    words = [
        name,
        files.get(f"{base}/operstate", "state unknown"),
        f"{speed} Mb/s" if speed.isdigit() else "speed unknown",
        f"driver {links[f'{base}/device/driver']}"
        if f"{base}/device/driver" in links
        else "driver unknown",
    ]
    rx = sorted(p for p in files if p.startswith(f"{base}/queues/rx-"))
    tx = [p for p in files if p.startswith(f"{base}/queues/tx-")]
    steering = [files[p] for p in rx if files[p].strip("0,")]
    words.append(
        f"{len(rx)} rx / {len(tx)} tx queues, RPS "
        + (f"on ({', '.join(steering)})" if steering else "off")
    )
    words.append(_irqs(name, links.get(f"{base}/device", ""), files, interrupts))
    return ", ".join(words)


def _irqs(name: str, device: str, files: dict[str, str], interrupts: list[str]) -> str:
    """The card's interrupts: named after it (eth0-TxRx-0) or after its device (virtio2-
    input.0, or the PCI address in the chip's column); where each may go and where it went."""
    if not interrupts:
        return "IRQs unavailable: /proc/interrupts not readable"
    cpus = len(interrupts[0].split())
    names = [re.escape(n) for n in (name, device) if n]
    owner = re.compile(rf"(^|[\s-])({'|'.join(names)})([-\s@]|$)")
    found = []
    for line in interrupts[1:]:
        number, _, rest = line.strip().partition(":")
        if not number.isdigit():
            continue
        words = rest.split()
        counts = [int(w) for w in words[:cpus] if w.isdigit()]
        label = " ".join(words[len(counts) :])
        if not owner.search(label):
            continue
        handled = [f"CPU{i}" for i, n in enumerate(counts) if n]
        may = files.get(f"/proc/irq/{number}/smp_affinity_list", "?")
        found.append(
            f"IRQ {number} {label.split()[-1]} → CPUs {may}"
            + (f", taken on {'+'.join(handled)}" if handled else ", none taken yet")
        )
    return "IRQs: " + " | ".join(found) if found else "no IRQ of its own in /proc/interrupts"
