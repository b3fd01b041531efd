"""The real kernel beside the simulator: a scenario's flows as Linux TCP connections between
network namespaces, through a user-space bottleneck emulator (crates/cubiclab-emu).

``testbed(scenario)`` runs it and returns results in the simulator's shape;
``compare(scenario)`` runs both and states the differences; ``cleanup()`` removes what a
killed run left. Use it to ask whether an experiment's outcome is the simulator's or
TCP's; to check one algorithm's arithmetic against the kernel's ACK by ACK, use
:mod:`cubiclab.kernel`. Both build their namespaces, links and endpoint processes with
:mod:`cubiclab.namespaces` and run the programs of :mod:`cubiclab.endpoints`. Needs root,
network namespaces and /dev/net/tun.
"""

from cubiclab.testbed.run import availability, cleanup, kernel_algorithms, plan, testbed

__all__ = ["testbed", "availability", "cleanup", "kernel_algorithms", "plan"]
