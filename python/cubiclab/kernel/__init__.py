"""Compare cubiclab's algorithms with the running Linux kernel, ACK by ACK.

``netns``: a sender/router/receiver testbed with a tbf bottleneck; ``tracing``: the
``tcp_probe`` and ``tcp_cong_state_set`` tracepoints; ``capture``: a real bulk flow,
traced; ``convert``: the trace as a replay trace plus the kernel's window after each ACK;
``compare``: replay and compare. Needs root, network namespaces and tracefs.
"""
