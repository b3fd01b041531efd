"""The kernel lab: check that an algorithm of cubiclab's computes what the running Linux
kernel computes, ACK by ACK.

One bulk flow runs through a ``tbf`` router between namespaces while the ``tcp_probe`` and
``tcp_cong_state_set`` tracepoints record the kernel's window after every ACK; the trace is
then replayed through cubiclab's algorithm and the two windows compared. Use it to
validate an algorithm's arithmetic; to compare whole experiments (many flows, RTTs, the
scenario's buffer, discipline and loss) between the simulator and the kernel, use
:mod:`cubiclab.testbed`. Both build their namespaces, links and endpoint processes with
:mod:`cubiclab.namespaces` and run the programs of :mod:`cubiclab.endpoints`.

``tbf_path``: the sender/router/receiver namespaces with a tbf bottleneck; ``tracing``: the
tracepoints; ``capture``: a real bulk flow, traced; ``convert``: the trace as a replay
trace plus the kernel's window after each ACK; ``compare``: replay and compare. Needs root,
network namespaces and tracefs.
"""
