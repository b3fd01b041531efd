"""The testbed's web schedule (`_core.web_schedule`) and the simulator draw each session's
objects from one place, the plan's `SessionDraws`: the sizes the simulator's sessions
request are the schedule's, in order."""

import json

import cubiclab
from cubiclab import _core
from cubiclab.scenario import WebGroup


def test_the_simulators_web_objects_are_the_schedules():
    sc = cubiclab.Scenario(duration="4s", flows=[cubiclab.FlowGroup("cubic", rtt="40ms")],
                           bottleneck=cubiclab.Bottleneck(rate="20Mbps"),
                           web=[WebGroup(sessions=6, direction="both", think="200ms", rtt="exp:40ms",
                                         mean_size="10packets")])
    schedule = json.loads(_core.web_schedule(sc.to_json()))
    web = cubiclab.simulate(sc).web
    assert len(web) > 30
    flows = len(sc.flows)  # sessions are numbered after the long-lived flows
    for session, got in web.groupby("session"):
        want = [bytes_ for bytes_, _ in schedule[session - flows]["objects"]]
        assert list(got.sort_values("t").bytes) == want[:len(got)], session
