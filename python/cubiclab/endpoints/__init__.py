"""The endpoint programs of the kernel lab: what runs inside the namespaces, started by
:meth:`cubiclab.namespaces.Namespaces.start`.

Each is a standalone script (standard library only, no import of cubiclab, so that it
starts in milliseconds on a loaded machine) that prints one JSON line once it is ready or
done:

- ``check_flow.py``: the per-ACK checks' one bulk flow (``server``, ``client``) and the
  sniffer of its ACKs (``sniff``), for :mod:`cubiclab.kernel.capture`;
- ``bulk.py``: the testbed's long-lived flows (``sink``, ``source``), for
  :mod:`cubiclab.testbed.run`;
- ``web.py``: the testbed's background web sessions.
"""

from pathlib import Path

CHECK_FLOW = Path(__file__).with_name("check_flow.py")
BULK = Path(__file__).with_name("bulk.py")
WEB = Path(__file__).with_name("web.py")
