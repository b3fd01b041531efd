"""Files a scenario or the CLI names (issue 34): outputs stay in the run's folder and never
replace what is not a regular file; inputs are read only from regular files, never waited
on, within a stated size; each refusal names its key or option and comes before the run."""

import os
import stat
from pathlib import Path

import numpy as np
import pytest

import cubiclab
from cubiclab import FlowGroup, Scenario, traces
from cubiclab.scenario import WebGroup
from cubiclab.cli import main
from cubiclab.io import check_file_target, read_input_file

SHORT = ["--duration", "1s", "--quiet", "--no-plots"]


def write_scenario(folder: Path, tables: str, top: str = "") -> Path:
    """A one-second scenario file with top-level keys `top` and then `tables`."""
    path = folder / "sc.toml"
    path.write_text(top + 'duration = "1s"\n[[flows]]\nalgorithm = "cubic"\nrtt = "40ms"\n' + tables)
    return path


def kinds(tmp_path):
    """One of each kind of name that is not a regular file."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    target = tmp_path / "target"
    target.write_text("keep")
    link = tmp_path / "link"
    link.symlink_to(target)
    folder = tmp_path / "folder"
    folder.mkdir()
    return {"a device": Path("/dev/null"), "a FIFO": fifo, "a symbolic link": link, "a folder": folder}


def test_file_targets_refuse_what_a_rename_would_replace(tmp_path):
    for kind, path in kinds(tmp_path).items():
        with pytest.raises(ValueError, match=f"--pcap '{path}' is {kind}; allowed: a new or regular file"):
            check_file_target(path, "--pcap")
    for bad in ("", None, 5):
        with pytest.raises(ValueError, match="--pcap is"):
            check_file_target(bad, "--pcap")
    with pytest.raises(ValueError, match="folder .* does not exist"):
        check_file_target(tmp_path / "no" / "x.pcap", "--pcap")
    (tmp_path / "old.pcap").write_text("old")
    assert check_file_target(tmp_path / "old.pcap", "--pcap") == tmp_path / "old.pcap"


def test_inputs_are_regular_files_within_their_size(tmp_path):
    for kind, path in kinds(tmp_path).items():
        if kind == "a symbolic link":  # followed: it names a regular file
            assert read_input_file(path, "trace") == b"keep"
            continue
        with pytest.raises(ValueError, match=fr"trace '{path}' is not a file \({kind}\); allowed: a regular file"):
            read_input_file(path, "trace")  # the FIFO is refused, not waited on
    for device in ("/dev/zero", "/dev/urandom"):
        with pytest.raises(ValueError, match=r"\(a device\)"):
            read_input_file(device, "trace")
    big = tmp_path / "big"
    big.write_bytes(b"1\n" * 600)
    with pytest.raises(ValueError, match="is 1,200 bytes; allowed: at most 1,000 bytes"):
        read_input_file(big, "trace", limit=1000)
    with pytest.raises(ValueError, match="trace: no such file"):
        read_input_file(tmp_path / "missing", "trace")


def test_cli_pcap_never_replaces_a_device_or_folder(tmp_path, capsys):
    before = os.stat("/dev/null")
    for target in ("/dev/null", str(tmp_path), ""):
        assert main(["run", "--out", str(tmp_path / "out"), *SHORT, "--pcap", target]) == 2
        assert "--pcap" in capsys.readouterr().err
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino
    assert not (tmp_path / "out").exists()  # refused before the run
    assert not list(tmp_path.glob("*.partial"))


def test_a_scenario_pcap_is_a_name_inside_the_run_folder(tmp_path, capsys, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    for escape in ("../../x.pcap", "/tmp/x.pcap", "sub/x.pcap", ".hidden", ""):
        path = write_scenario(tmp_path, f'[record]\npcap = "{escape}"\n')
        assert main(["run", str(path), "--out", str(tmp_path / "out"), *SHORT]) == 2
        assert "record.pcap" in capsys.readouterr().err
    path = write_scenario(tmp_path, '[record]\npcap = "run.pcap"\n')
    assert main(["run", str(path), "--out", str(tmp_path / "out"), *SHORT]) == 0
    assert (tmp_path / "out" / "sc" / "run.pcap").stat().st_size > 1000
    assert f"wrote capture {tmp_path / 'out' / 'sc' / 'run.pcap'}" in capsys.readouterr().out
    assert list(work.iterdir()) == []


def test_a_scenario_pcap_never_takes_a_results_files_name(tmp_path, capsys):
    # summary.json, a table (.parquet/.csv) or a plot (.png/.svg) is written into the same
    # folder after the capture and would overwrite it: refused before the run.
    for name in ("summary.json", "flows.parquet", "link.CSV", "cwnd.png"):
        path = write_scenario(tmp_path, f'[record]\npcap = "{name}"\n')
        assert main(["run", str(path), "--out", str(tmp_path / "out"), *SHORT]) == 2
        err = capsys.readouterr().err
        assert f"record.pcap is '{name}'; allowed: a name the run's own files do not take" in err, err
    assert not (tmp_path / "out").exists()


def test_a_trace_is_named_from_the_scenario_file(tmp_path, monkeypatch):
    (tmp_path / "link.trace").write_text("\ufeff" + "1\n" * 12)  # a byte-order mark is tolerated
    path = write_scenario(tmp_path, '[bottleneck]\nrate = "12Mbps"\nschedule = { trace = "link.trace" }\n')
    monkeypatch.chdir("/")
    sc = Scenario.load(path)
    assert sc.compile()["bottleneck"]["schedule"]["file"] == str(tmp_path / "link.trace")


def test_bad_traces_name_the_key_and_the_file(tmp_path):
    where = "bottleneck.schedule.trace"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=fr"{where} '{fifo}' is not a file \(a FIFO\)"):
        traces.load_trace(str(fifo))
    with pytest.raises(ValueError, match=fr"{where} '/dev/zero' is not a file \(a device\)"):
        traces.load_trace("/dev/zero")
    for text in ("²\n".encode(), b"\xff\xfe1\n"):
        (tmp_path / "bad.trace").write_bytes(text)
        with pytest.raises(ValueError, match=f"{where}: {tmp_path / 'bad.trace'} line 1 is"):
            traces.load_trace(str(tmp_path / "bad.trace"))
    with pytest.raises(ValueError, match=f"{where} is ''"):
        traces.load_trace("")


def test_cli_run_of_an_empty_name_is_refused(tmp_path, capsys):
    assert main(["run", "", "--out", str(tmp_path), *SHORT]) == 2
    assert "scenario file is ''" in capsys.readouterr().err


def test_replay_output_never_replaces_a_device_or_folder(tmp_path, capsys):
    trace = tmp_path / "t.csv"
    trace.write_text("time_us,event,acked,rtt_us\n1000,ack,1,40000\n")
    for target in ("/dev/null", str(tmp_path)):
        assert main(["replay", "cubic", str(trace), "-o", target]) == 2
        assert "--output" in capsys.readouterr().err
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert main(["replay", "cubic", "/dev/zero"]) == 2
    assert "'/dev/zero' is not a file (a device)" in capsys.readouterr().err


def test_numpy_numbers_and_non_finite_values_through_simulate():
    sc = Scenario(duration="1s", flows=[FlowGroup("cubic", rtt="40ms", count=np.int64(2))])
    assert len(cubiclab.simulate(sc).totals) == 2
    with pytest.raises(ValueError, match=r"flows\[0\].params.beta: nan is not a finite number"):
        cubiclab.simulate(sc.replace(flows=[FlowGroup("cubic", rtt="40ms", params={"beta": float("nan")})]))


@pytest.mark.parametrize("body, message", [
    ('[record]\npcap = "x.pcap"\npcap_flows = 3\n', r"record.pcap_flows is 3 \(int\); allowed: a list \(an integer each\) or omitted"),
    ('[record]\npcap = 5\n', r"record.pcap is 5 \(int\); allowed: text or omitted"),
    ('[record]\npcap = "x.pcap"\npcap_flows = [0, "1"]\n', r"record.pcap_flows\[1\] is '1' \(str\)"),
    ('[bottleneck]\nred = []\n', r"bottleneck.red is \[\] \(list\); allowed: a table"),
    ('[bottleneck]\nqueue = 5\n', r"bottleneck.queue is 5 \(int\); allowed: text"),
    ('', r"seed is '1' \(str\); allowed: an integer"),
])
def test_types_are_checked_before_the_schema(tmp_path, body, message):
    with pytest.raises(ValueError, match=f"sc.toml: {message}"):
        Scenario.load(write_scenario(tmp_path, body, top="" if body else 'seed = "1"\n'))


def test_numpy_numbers_are_numbers_and_nan_is_named():
    sc = Scenario(duration="1s", mss=np.int64(1448), seed=np.int32(3),
                  flows=[FlowGroup("cubic", rtt="40ms", initial_cwnd=np.int64(10))])
    plain = Scenario(duration="1s", seed=3, flows=[FlowGroup("cubic", rtt="40ms")])
    assert sc.to_json() == plain.to_json()
    with pytest.raises(ValueError, match=r"web\[0\].load: nan is not a finite number"):
        Scenario(duration="1s", web=[WebGroup(load=float("nan"))]).compile()
