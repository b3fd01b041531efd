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
    # Times in seconds, as in every result table: ACK 19 at 1900 us, the loss at 2500 us.
    assert df.columns[0] == "t" and "time_us" not in df
    assert (df.t.iloc[19], df.t.iloc[20]) == (0.0019, 0.0025)


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


def test_bbr_replays_a_trace_with_rate_samples():
    # One ACK of the ideal path in crates/cubiclab-cc/src/replay.rs: a sample of 100
    # segments in 10 ms is bw = 100 * 2^24 / 10000 = 167772; STARTUP paces at
    # ((167772 * mss * 739) >> 8) * 990000 >> 24 B/s: 41381651 at MSS 1448, 28588637 at 1000.
    trace = ("time_us,event,acked,rtt_us,rs_prior_delivered,rs_delivered,rs_interval_us,rs_app_limited\n"
             "100,ack,1,10000,0,100,10000,0\n")
    df = cubiclab.replay("bbr", trace)
    assert (int(df.cwnd[0]), int(df.pacing_rate[0]), int(df["mode"][0])) == (11, 41381651, 0)
    assert int(cubiclab.replay("bbr", trace, mss=1000).pacing_rate[0]) == ((167772 * 1000 * 739) >> 8) * 990000 >> 24
    with pytest.raises(ValueError, match="rs_delivered"):
        cubiclab.replay("bbr", "time_us,event,acked,rtt_us\n0,ack,1,100\n")
    with pytest.raises(ValueError, match="seed is -1"):
        cubiclab.replay("bbr", trace, seed=-1)
