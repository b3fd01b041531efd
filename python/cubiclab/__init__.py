"""cubiclab: TCP CUBIC and its rivals, a packet simulator to run them, and the models.

Quick start::

    import cubiclab
    df = cubiclab.replay("cubic", cubiclab.builtin_trace())   # pandas DataFrame
    cubiclab.algorithms()                                       # the registry
"""

from cubiclab.algorithms import algorithms, check_algorithm
from cubiclab.replay import builtin_trace, replay
from cubiclab.window import window_curve

__all__ = ["algorithms", "check_algorithm", "builtin_trace", "replay", "window_curve"]
__version__ = "0.1.0"
