"""How a machine is tuned, from its /sys and /proc files (runs/loadhosts/tuning.py): the
CPU governor and the network cards with their queues and interrupts, or why not."""

from __future__ import annotations

from pathlib import Path

from runs.loadhosts.tuning import NO_GOVERNOR, tuning_facts, tuning_text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tuning"


def read(name: str) -> dict[str, object]:
    return tuning_facts((FIXTURES / name).read_text())


def test_a_virtual_machine_without_cpufreq_says_the_governor_is_unavailable():
    facts = read("vm_virtio.txt")  # read on a 2-CPU KVM guest
    assert facts["cpu_governor"] == NO_GOVERNOR
    assert facts["network"] == (
        "eth0, up, speed unknown, driver virtio_net, 1 rx / 1 tx queues, RPS off, "
        "IRQs: IRQ 37 virtio2-config → CPUs 0-1, none taken yet"
        " | IRQ 38 virtio2-input.0 → CPUs 0-1, taken on CPU1"
        " | IRQ 39 virtio2-output.0 → CPUs 0-1, taken on CPU0"
    )  # lo and the ifb interfaces have no device: not cards


def test_governors_per_cpu_and_a_multiqueue_card_pinned_by_irq():
    facts = read("bare_metal_ixgbe.txt")
    assert facts["cpu_governor"] == "performance on CPU 0-1,3, powersave on CPU 2"
    network = str(facts["network"])
    assert network.startswith("eno1, up, 10000 Mb/s, driver ixgbe, 2 rx / 2 tx queues, RPS off")
    assert "IRQ 120 eno1-TxRx-0 → CPUs 0, taken on CPU0" in network
    assert "IRQ 121 eno1-TxRx-1 → CPUs 1, taken on CPU1" in network
    assert "ahci" not in network and "docker0" not in network


def test_one_governor_everywhere_is_said_once():
    text = "".join(
        f"F\t/sys/devices/system/cpu/cpu{n}/cpufreq/scaling_governor\tschedutil\n" for n in range(8)
    )
    assert tuning_facts(text)["cpu_governor"] == "schedutil (all 8 CPUs)"


def test_nothing_readable_says_so():
    assert tuning_facts("") == {
        "cpu_governor": NO_GOVERNOR,
        "network": "unavailable: no network card in /sys/class/net (only virtual interfaces)",
    }


def test_this_machines_own_reading_is_read_the_same_way():
    facts = tuning_facts(tuning_text())
    assert set(facts) == {"cpu_governor", "network"}
    assert all(isinstance(v, str) and v for v in facts.values())
