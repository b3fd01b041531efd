import subprocess
import sys

import pytest

import cubiclab


def test_reno_replay_slow_start_and_loss():
    # Slow start from cwnd 10: 20 single-segment ACKs give 30; a loss halves to 15.
    rows = ["time_us,event,acked,rtt_us"] + [f"{i*100},ack,1,40000" for i in range(20)] + ["2500,loss,,"]
    df = cubiclab.replay("reno", "\n".join(rows))
    assert df.cwnd.iloc[19] == 30
    assert (df.cwnd.iloc[20], df.ssthresh.iloc[20]) == (15, 15)


def test_bad_algorithm_and_param_are_value_errors():
    with pytest.raises(ValueError, match="unknown algorithm 'cubik'"):
        cubiclab.replay("cubik", "time_us,event\n0,ack\n")
    with pytest.raises(ValueError, match="unknown parameter 'beta' for algorithm 'reno'"):
        cubiclab.replay("reno", "time_us,event\n0,ack\n", params={"beta": 0.5})
    with pytest.raises(ValueError, match="line 2"):
        cubiclab.replay("reno", "time_us,event\n0,akc\n")


def test_cli_replay_json_and_exit_code(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("time_us,event,acked,rtt_us\n0,ack,1,1000\n")
    out = subprocess.run([sys.executable, "-m", "cubiclab.cli", "replay", "reno", str(trace), "--format", "json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert '"cwnd":11' in out.stdout
    bad = subprocess.run([sys.executable, "-m", "cubiclab.cli", "replay", "nope", str(trace)],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown algorithm" in bad.stderr


def test_window_curve_plateau_at_wmax():
    # K = cbrt(W_max * beta / C) = cbrt(1000 * 0.2 / 0.4) = cbrt(500) = 7.937 s;
    # W(K) = W_max and W(0) = W_max (1 - beta) = 800.
    df = cubiclab.window_curve(w_max=1000, t_end=20, rtt=0.1, points=2001)
    k = 500 ** (1 / 3)
    i = (df.t - k).abs().idxmin()
    assert abs(df.w_cubic.iloc[i] - 1000) < 0.01
    assert abs(df.w_cubic.iloc[0] - 800) < 1e-9
