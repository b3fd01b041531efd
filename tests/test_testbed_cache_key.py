"""A kernel run's cache key follows what the run uses: the emulator's bytes, not the
simulator's extension (cubiclab.testbed.cache_key)."""

import os

import cubiclab
from cubiclab import sweep
from cubiclab.testbed.cache_key import kernel_run_key


def scenario(seed=1):
    return cubiclab.Scenario(seed=seed, duration="5s", bottleneck=cubiclab.Bottleneck(rate="50Mbps"),
                             flows=[cubiclab.FlowGroup("reno", count=2, rtt="40ms")])


def test_the_key_follows_the_emulator_binary_not_the_extension(tmp_path, monkeypatch):
    emulator = tmp_path / "cubiclab-emu"
    emulator.write_bytes(b"emulator build 1")
    monkeypatch.setenv("CUBICLAB_EMU", str(emulator))
    sc = scenario()
    before = kernel_run_key(sc)
    assert kernel_run_key(sc) == before
    assert kernel_run_key(scenario(seed=2)) != before  # the seed is part of what runs

    # Another extension (a rebuilt `_core`): the simulator's keys change, the kernel run's not.
    other_core = tmp_path / "_core.so"
    other_core.write_bytes(b"another build of the extension")
    sim_before = sweep.run_key(sc)
    monkeypatch.setattr(sweep, "_CODE_VERSION", None)
    monkeypatch.setattr(cubiclab._core, "__file__", str(other_core))
    assert sweep.run_key(sc) != sim_before
    assert kernel_run_key(sc) == before

    # The emulator rebuilt (same size, new bytes): the kernel run's key changes.
    emulator.write_bytes(b"emulator build 2")
    os.utime(emulator, ns=(0, 1))
    assert kernel_run_key(sc) != before
