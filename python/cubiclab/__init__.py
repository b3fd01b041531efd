"""cubiclab: TCP CUBIC and its rivals, a packet simulator to run them, and the models.

Quick start::

    import cubiclab
    df = cubiclab.replay("cubic", cubiclab.builtin_trace())   # pandas DataFrame
    cubiclab.algorithms()                                       # the registry
    cubiclab.algorithm_info("cubic").beta_kept                  # 717/1024: the window kept at a loss
    res = cubiclab.simulate(cubiclab.default_scenario())        # seed 000 Fig. 6
    res.flows, res.totals, res.summary
    tb = cubiclab.testbed(scenario)                             # the same on the real kernel (root)
"""

import os as _os
import sys as _sys

# Ctrl-C while the command line imports numpy and pandas (its first ~0.7 s), before
# cubiclab.cli.main can catch it: the command's own line and status, not a traceback. An
# extension module interrupted while it loads may turn the KeyboardInterrupt into an
# ImportError that no longer holds it (numpy's "PyCapsule_Import could not import module"),
# so the command notes the signal itself while it imports.
_command = _os.path.basename((getattr(_sys, "argv", None) or [""])[0]) == "cubiclab"
_interrupted = []
if _command:
    import signal as _signal

    def _note_interrupt(signum, frame):
        _interrupted.append(signum)
        _signal.default_int_handler(signum, frame)

    _previous = _signal.signal(_signal.SIGINT, _note_interrupt)
try:
    from cubiclab.algorithms import algorithms, check_algorithm
    from cubiclab.algorithms import info as algorithm_info
    from cubiclab.replay import builtin_trace, replay
    from cubiclab.results import Results
    from cubiclab.scenario import Bottleneck, FlowGroup, Link, Record, Scenario, default_scenario
    from cubiclab.simulate import simulate
    from cubiclab.testbed import testbed
    from cubiclab.window import window_curve
except BaseException as _e:
    if _command and (_interrupted or isinstance(_e, KeyboardInterrupt)):
        _sys.stderr.write("cubiclab: interrupted\n")
        raise SystemExit(130) from None
    raise
finally:
    if _command:
        _signal.signal(_signal.SIGINT, _previous)

__all__ = [
    "algorithms", "algorithm_info", "check_algorithm", "builtin_trace", "replay", "window_curve",
    "Scenario", "FlowGroup", "Bottleneck", "Link", "Record", "default_scenario", "simulate", "Results", "testbed",
]
__version__ = "0.1.0"
