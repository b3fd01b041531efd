//! Python bindings: conversions and error mapping only. Rust errors become `ValueError`
//! with the library's message; a panic becomes a Python exception, never an abort.

use numpy::IntoPyArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use cubiclab_cc::replay::{check_replayable, parse_trace_csv, replay_with, ReplayOptions, ReplayStart};
use cubiclab_cc::{registry, Algorithm, CaState, CongestionControl, Params, ALGORITHMS};
use cubiclab_emu::config::{Duplex, HopCfg};
use cubiclab_sim::scenario::{self, MemoryNeed, ACK_BYTES, HEADER_BYTES, MAX_FLOWS, MAX_HOPS, MEMORY_BUDGET_BYTES};
use cubiclab_sim::{Column, Direction, PlannedHop, Results, Scenario, Sim};

fn params_from(set: Option<&Bound<'_, PyDict>>) -> PyResult<Params> {
    let mut p = Params::new();
    if let Some(d) = set {
        for (k, v) in d.iter() {
            let name: String = k.extract()?;
            if let Ok(text) = v.extract::<String>() {
                p.insert(&name, text.as_str());
            } else {
                let value: f64 = v.extract().map_err(|_| {
                    PyValueError::new_err(format!("parameter '{name}' must be a number or a name, got {v}"))
                })?;
                p.insert(&name, value);
            }
        }
    }
    Ok(p)
}

/// Replay a trace CSV (text) through an algorithm. Returns a dict of columns.
#[pyfunction]
#[pyo3(signature = (algorithm, trace_csv, params=None, initial_cwnd=None, initial_ssthresh=None, mss=None, seed=None, handshake_rtt_us=None, start_us=None, handshake_acked=false))]
#[allow(clippy::too_many_arguments)]
fn replay_csv<'py>(
    py: Python<'py>,
    algorithm: &str,
    trace_csv: &str,
    params: Option<&Bound<'py, PyDict>>,
    initial_cwnd: Option<u32>,
    initial_ssthresh: Option<u32>,
    mss: Option<u32>,
    seed: Option<u64>,
    handshake_rtt_us: Option<u32>,
    start_us: Option<u64>,
    handshake_acked: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let p = params_from(params)?;
    let alg = Algorithm::new(algorithm, &p).map_err(|e| PyValueError::new_err(e.0))?;
    let events = parse_trace_csv(trace_csv).map_err(PyValueError::new_err)?;
    check_replayable(&alg, algorithm, &events).map_err(PyValueError::new_err)?;
    if mss == Some(0) {
        return Err(PyValueError::new_err("mss must be at least 1 byte"));
    }
    let opts = ReplayOptions { mss, seed, handshake_rtt_us, start_us, handshake_acked };
    let mut start = ReplayStart::default();
    if let Some(c) = initial_cwnd {
        if c == 0 {
            return Err(PyValueError::new_err("initial_cwnd must be at least 1 segment"));
        }
        start.cwnd = c;
    }
    if let Some(s) = initial_ssthresh {
        if s < 2 {
            return Err(PyValueError::new_err("initial_ssthresh must be at least 2 segments"));
        }
        start.ssthresh = s;
    }
    let rows = py.allow_threads(|| replay_with(alg, start, opts, &events));
    let out = PyDict::new(py);
    out.set_item("time_us", rows.iter().map(|r| r.time_us).collect::<Vec<_>>())?;
    out.set_item("event", rows.iter().map(|r| r.event).collect::<Vec<_>>())?;
    out.set_item("cwnd", rows.iter().map(|r| r.cwnd).collect::<Vec<_>>())?;
    out.set_item("ssthresh", rows.iter().map(|r| r.ssthresh).collect::<Vec<_>>())?;
    out.set_item("cwnd_cnt", rows.iter().map(|r| r.cwnd_cnt).collect::<Vec<_>>())?;
    out.set_item("ca_state", rows.iter().map(|r| r.ca_state.name()).collect::<Vec<_>>())?;
    out.set_item("pacing_rate", rows.iter().map(|r| r.pacing_rate).collect::<Vec<_>>())?;
    if let Some(first) = rows.first() {
        for (i, (name, _)) in first.vars.iter().enumerate() {
            out.set_item(*name, rows.iter().map(|r| r.vars.get(i).map_or(f64::NAN, |v| v.1)).collect::<Vec<_>>())?;
        }
    }
    Ok(out)
}

/// bbr's PROBE_BW entry phases for a seed (`cubiclab_cc::bbr::Bbr::entry_phases`).
#[pyfunction]
fn bbr_entry_phases(seed: u64, n: usize) -> Vec<u32> {
    cubiclab_cc::bbr::Bbr::entry_phases(seed, n.min(1 << 16))
}

/// One parameter as Python sees it: (name, default, min, max, integer, unit, help, choices).
type ParamRow = (&'static str, f64, f64, f64, bool, &'static str, &'static str, Vec<&'static str>);

/// The registry: a list of (name, reference, [parameter rows]).
#[pyfunction]
fn algorithms() -> Vec<(&'static str, &'static str, Vec<ParamRow>)> {
    ALGORITHMS
        .iter()
        .map(|a| {
            (
                a.name,
                a.reference,
                a.params
                    .iter()
                    .map(|p| (p.name, p.default, p.min, p.max, p.integer, p.unit, p.help, p.choices.to_vec()))
                    .collect(),
            )
        })
        .collect()
}

/// An algorithm's decrease and growth facts for `params` (`cubiclab_cc::facts`): a dict of
/// beta_kept, beta_kept_bounds, beta_kept_by_window, growth and growth_constants, and
/// needs_ecn (`TCP_CONG_NEEDS_ECN`: it negotiates ECN itself, and its receiver's half runs
/// in the congestion control).
#[pyfunction]
#[pyo3(signature = (algorithm, params=None))]
fn algorithm_facts<'py>(
    py: Python<'py>,
    algorithm: &str,
    params: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let a = registry::lookup(algorithm).map_err(|e| PyValueError::new_err(e.0))?;
    let p = params_from(params)?;
    let facts = a.facts(&p).map_err(|e| PyValueError::new_err(e.0))?;
    let needs_ecn = Algorithm::new(algorithm, &p).map_err(|e| PyValueError::new_err(e.0))?.needs_ecn();
    let out = PyDict::new(py);
    out.set_item("needs_ecn", needs_ecn)?;
    out.set_item("beta_kept", facts.beta_kept)?;
    out.set_item("beta_kept_bounds", facts.beta_kept_bounds)?;
    out.set_item("beta_kept_by_window", facts.beta_kept_by_window())?;
    out.set_item("growth", facts.growth.name())?;
    out.set_item("growth_constants", facts.growth.constants())?;
    Ok(out)
}

/// Check an algorithm name and parameters without running anything.
#[pyfunction]
#[pyo3(signature = (algorithm, params=None))]
fn check_algorithm(algorithm: &str, params: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    let p = params_from(params)?;
    Algorithm::new(algorithm, &p).map(|_| ()).map_err(|e| PyValueError::new_err(e.0))
}

/// A simulation run in steps, so Python can show progress and be interrupted.
#[pyclass]
struct Simulation {
    sim: Option<Sim>,
}

#[pymethods]
impl Simulation {
    /// `spec_json`: the scenario in the schema's layout (what `cubiclab.Scenario.compile`
    /// produces); it is checked here, once, with errors naming the key.
    #[new]
    fn new(spec_json: &str) -> PyResult<Self> {
        let sc = Scenario::from_json(spec_json).map_err(PyValueError::new_err)?;
        let sim = Sim::new(sc).map_err(PyValueError::new_err)?;
        Ok(Self { sim: Some(sim) })
    }

    /// Advance to simulated time `until_ns`, or through at most `max_events` events; true
    /// when the run is complete.
    #[pyo3(signature = (until_ns, max_events = u64::MAX))]
    fn run_until(&mut self, py: Python<'_>, until_ns: u64, max_events: u64) -> PyResult<bool> {
        let sim = self.sim.as_mut().ok_or_else(|| PyValueError::new_err("simulation already finished"))?;
        Ok(py.allow_threads(move || sim.run_until_or_events(until_ns, max_events)))
    }

    #[getter]
    fn now_ns(&self) -> u64 {
        self.sim.as_ref().map_or(0, |s| s.now())
    }

    #[getter]
    fn duration_ns(&self) -> u64 {
        self.sim.as_ref().map_or(0, |s| s.duration())
    }

    #[getter]
    fn events(&self) -> u64 {
        self.sim.as_ref().map_or(0, |s| s.events())
    }

    /// Finish and return the results as a dict of column dicts.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let mut sim = self.sim.take().ok_or_else(|| PyValueError::new_err("simulation already finished"))?;
        sim.close_capture().map_err(PyValueError::new_err)?;
        results_to_py(py, sim.finish())
    }
}

fn column_to_py<'py>(py: Python<'py>, c: Column) -> PyResult<Bound<'py, PyAny>> {
    Ok(match c {
        Column::U8(v) => v.into_pyarray(py).into_any(),
        Column::U32(v) => v.into_pyarray(py).into_any(),
        Column::U64(v) => v.into_pyarray(py).into_any(),
        Column::I64(v) => v.into_pyarray(py).into_any(),
        Column::F64(v) => v.into_pyarray(py).into_any(),
        Column::Bool(v) => v.into_pyarray(py).into_any(),
        Column::Str(v) => v.into_pyobject(py)?.into_any(),
        Column::OptU64(v) => v.into_pyobject(py)?.into_any(),
    })
}

/// Every table as a dict of columns (NumPy arrays; lists for text and gaps).
fn results_to_py<'py>(py: Python<'py>, r: Results) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (name, columns) in r.into_tables() {
        let table = PyDict::new(py);
        for (col, values) in columns {
            table.set_item(col, column_to_py(py, values)?)?;
        }
        out.set_item(name, table)?;
    }
    Ok(out)
}

/// Check a scenario (JSON in the schema's layout) and return its flow plan as JSON: the
/// flows with names, delays and start times, the web lanes and sessions. Without
/// `check_algorithms` the algorithm names are not looked up in the library's registry (the
/// testbed runs the kernel's).
#[pyfunction]
#[pyo3(signature = (spec_json, check_algorithms=true))]
fn plan(spec_json: &str, check_algorithms: bool) -> PyResult<String> {
    let sc = Scenario::parse_json(spec_json).map_err(PyValueError::new_err)?;
    let checked = if check_algorithms { sc.validate() } else { sc.validate_path_and_flows() };
    checked.map_err(PyValueError::new_err)?;
    serde_json::to_string(&sc.plan()).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Read the Mahimahi trace of the regular file `path`, open as `fd`: streamed line by line and kept as
/// runs (`cubiclab_path::schedule::trace`), within the run memory budget; a trace read last
/// in this process and unchanged since is not read again. `progress(bytes read)` is called
/// every few MB, and Ctrl-C stops the reading. Returns its digest, opportunities, period
/// (ms), runs and bytes in memory; a ValueError names the line at fault.
#[pyfunction]
#[pyo3(signature = (path, fd, progress=None))]
fn read_trace(
    py: Python<'_>,
    path: std::path::PathBuf,
    fd: i32,
    progress: Option<PyObject>,
) -> PyResult<(String, u64, u64, usize, u64)> {
    use std::os::fd::BorrowedFd;
    // SAFETY: the caller's fd stays open for this call; we read from a duplicate of it.
    let file = unsafe { BorrowedFd::borrow_raw(fd) }.try_clone_to_owned()?;
    let mut stopped = None;
    let read = {
        let mut on_progress = |bytes: u64| {
            let step = py.check_signals().and_then(|()| match &progress {
                Some(p) => p.call1(py, (bytes,)).map(drop),
                None => Ok(()),
            });
            step.map_err(|e| stopped = Some(e)).is_ok()
        };
        cubiclab_path::schedule::trace::load(&path, std::fs::File::from(file), MEMORY_BUDGET_BYTES, &mut on_progress)
    };
    if let Some(e) = stopped {
        return Err(e);
    }
    let t = read.map_err(PyValueError::new_err)?;
    Ok((t.digest(), t.opportunities(), t.period_ms(), t.runs(), t.heap_bytes()))
}

/// The scenario's memory estimate (`Scenario::memory_needs`): (key, bytes, what) of each
/// part of the run.
#[pyfunction]
fn memory_needs(spec_json: &str) -> PyResult<Vec<(String, u64, String)>> {
    let sc = Scenario::parse_json(spec_json).map_err(PyValueError::new_err)?;
    Ok(sc.memory_needs().into_iter().map(|n| (n.key, n.bytes, n.what)).collect())
}

/// The scenario's memory estimate (`Scenario::memory_needs`) with `more` (key, bytes, what,
/// remedy: what the caller adds, such as the plots) against the run memory budget: a
/// ValueError naming the key that asks for most and the way to ask for less.
#[pyfunction]
fn check_memory(spec_json: &str, more: Vec<(String, u64, String, String)>) -> PyResult<()> {
    let sc = Scenario::parse_json(spec_json).map_err(PyValueError::new_err)?;
    let more = more.into_iter().map(|(key, bytes, what, remedy)| MemoryNeed { key, bytes, what, remedy }).collect();
    sc.check_memory(more).map_err(PyValueError::new_err)
}

/// The emulator's `key value` lines for the scenario's links in both directions (each with
/// the random streams the simulator gives it), its seed and, for a path of several links,
/// every flow's route: the path the simulator builds from the same scenario. Routes are
/// numbered as the testbed writes its flow lines: the long-lived flows, then the web
/// sessions, in the plan's order.
#[pyfunction]
fn emulator_path(spec_json: &str) -> PyResult<String> {
    let sc = Scenario::parse_json(spec_json).map_err(PyValueError::new_err)?;
    sc.validate_path_and_flows().map_err(PyValueError::new_err)?;
    let links: Vec<Duplex<_>> = (0..sc.links.len())
        .map(|k| Duplex {
            dirs: [Direction::Forward, Direction::Reverse].map(|d| (sc.link_spec(k, d), Scenario::link_stream(k, d))),
            fwd_schedule: sc.links[k].schedule.as_ref().map(|s| s.spec()),
        })
        .collect();
    let directions: Vec<(usize, Direction)> = sc.link_directions().collect();
    // A flow's hops sorted by the way they go (its data's and its ACKs' take one way each).
    let route = |data: &[PlannedHop], acks: &[PlannedHop]| {
        let mut r: [Vec<HopCfg>; 2] = Default::default();
        for h in data.iter().chain(acks) {
            let (k, dir) = directions[h.link as usize];
            r[dir as usize].push(HopCfg { link: k as u16, delay_ns: h.delay_ns });
        }
        r
    };
    let plan = sc.plan();
    let routes: Vec<_> = plan
        .flows
        .iter()
        .map(|f| route(&f.data_hops, &f.ack_hops))
        .chain(plan.sessions.iter().map(|s| route(&s.data_hops, &s.ack_hops)))
        .collect();
    Ok(cubiclab_emu::config::links_text(&links, sc.seed, &routes))
}

/// The background web sessions of a scenario as the testbed runs them, JSON: per session its
/// group, direction ("forward": data on the forward bottleneck), RTT and one-way delays,
/// algorithm, first request time, and the objects it requests in order with the think time
/// after each: (bytes, think ns), as many as fit in the run (`SessionDraws::objects`: the
/// simulator's draws).
#[pyfunction]
fn web_schedule(spec_json: &str) -> PyResult<String> {
    let sc = Scenario::parse_json(spec_json).map_err(PyValueError::new_err)?;
    sc.validate_path_and_flows().map_err(PyValueError::new_err)?;
    let plan = sc.plan();
    let sessions: Vec<serde_json::Value> = plan
        .sessions
        .into_iter()
        .map(|s| {
            let lane = &plan.lanes[s.lane as usize];
            let w = &sc.web[lane.web_group];
            let objects = s.draws.objects(s.first_request_ns, sc.duration_ns);
            let delay = |hops: &[PlannedHop]| hops.iter().map(|h| h.delay_ns).sum::<u64>();
            let (data, acks) = (delay(&s.data_hops), delay(&s.ack_hops));
            let forward = lane.direction == Direction::Forward;
            let (forward_delay_ns, reverse_delay_ns) = if forward { (data, acks) } else { (acks, data) };
            serde_json::json!({
                "group": lane.group, "forward": lane.direction == Direction::Forward,
                "rtt_ns": s.rtt_ns, "forward_delay_ns": forward_delay_ns, "reverse_delay_ns": reverse_delay_ns,
                "algorithm": w.algorithm, "recovery": w.recovery, "first_request_ns": s.first_request_ns,
                "objects": objects,
            })
        })
        .collect();
    Ok(serde_json::Value::Array(sessions).to_string())
}

/// Bits a link's rate schedule (a compiled scenario's `schedule` object) can carry in [0, t)
/// for each t in `times_ns`: the offered capacity a plot draws under a schedule.
#[pyfunction]
fn schedule_capacity_bits(schedule_json: &str, times_ns: Vec<u64>) -> PyResult<Vec<f64>> {
    let schedule: scenario::Schedule =
        serde_json::from_str(schedule_json).map_err(|e| PyValueError::new_err(format!("schedule: {e}")))?;
    let rates = schedule.rate_schedule("schedule").map_err(PyValueError::new_err)?;
    Ok(times_ns.into_iter().map(|t| rates.capacity_bits(t) as f64).collect())
}

/// The highest rate a link's rate schedule (a compiled scenario's `schedule` object) offers,
/// bits/s: what the emulator must keep up with.
#[pyfunction]
fn schedule_peak_bps(schedule_json: &str) -> PyResult<u64> {
    let schedule: scenario::Schedule =
        serde_json::from_str(schedule_json).map_err(|e| PyValueError::new_err(format!("schedule: {e}")))?;
    Ok(schedule.rate_schedule("schedule").map_err(PyValueError::new_err)?.peak_bps())
}

/// One bandwidth-delay product in whole bytes (`cubiclab_sim::scenario::bdp_bytes`).
#[pyfunction]
fn bdp_bytes(rate_bps: u64, rtt_ns: u64) -> u64 {
    scenario::bdp_bytes(rate_bps, rtt_ns)
}

/// The scenario's JSON Schema (keys, types, units, meaning).
#[pyfunction]
fn scenario_schema() -> String {
    Scenario::json_schema()
}

/// Every result table's columns and their meaning: [(table, [(column, meaning)])].
#[pyfunction]
fn result_schema() -> Vec<(&'static str, Vec<(&'static str, &'static str)>)> {
    Results::schema().into_iter().map(|(t, cols)| (t, cols.to_vec())).collect()
}

/// Run the testbed's bottleneck emulator (`cubiclab-emu`) with a `key value`
/// configuration until SIGTERM/SIGINT, end of file on its control descriptor, or its time
/// bound; returns the summary lines. It installs its own signal handlers and moves the
/// calling thread into other network namespaces: call it only in a process of its own
/// (`cubiclab.testbed` starts one).
#[pyfunction]
fn emulate(py: Python<'_>, config: &str) -> PyResult<String> {
    let cfg = cubiclab_emu::Config::parse(config).map_err(PyValueError::new_err)?;
    cubiclab_emu::install_signal_handlers();
    py.allow_threads(|| cubiclab_emu::run(&cfg)).map(|s| s.text()).map_err(pyo3::exceptions::PyRuntimeError::new_err)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(replay_csv, m)?)?;
    m.add_function(wrap_pyfunction!(bbr_entry_phases, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(algorithm_facts, m)?)?;
    m.add_function(wrap_pyfunction!(check_algorithm, m)?)?;
    m.add_function(wrap_pyfunction!(emulate, m)?)?;
    m.add_function(wrap_pyfunction!(emulator_path, m)?)?;
    m.add_function(wrap_pyfunction!(web_schedule, m)?)?;
    m.add_function(wrap_pyfunction!(plan, m)?)?;
    m.add_function(wrap_pyfunction!(check_memory, m)?)?;
    m.add_function(wrap_pyfunction!(memory_needs, m)?)?;
    m.add_function(wrap_pyfunction!(read_trace, m)?)?;
    m.add_function(wrap_pyfunction!(bdp_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(schedule_capacity_bits, m)?)?;
    m.add_function(wrap_pyfunction!(schedule_peak_bps, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_schema, m)?)?;
    m.add_function(wrap_pyfunction!(result_schema, m)?)?;
    m.add("HEADER_BYTES", HEADER_BYTES)?;
    m.add("DISCIPLINE_TABLES", cubiclab_sim::QueueSettings::table_names())?;
    // The tables' durations ("table.key"), which a file gives as times, set by default or
    // not: `Table::times` and `Table::optional_times`.
    let times: Vec<String> =
        cubiclab_sim::QueueSettings::default().time_keys("").into_iter().map(|(k, _)| k[1..].to_string()).collect();
    m.add("DISCIPLINE_TIMES", times)?;
    m.add("MAX_FLOWS", MAX_FLOWS)?;
    m.add("MAX_HOPS", MAX_HOPS)?;
    m.add("MAX_TIME_NS", scenario::MAX_TIME_NS)?;
    m.add("MEMORY_BUDGET_BYTES", MEMORY_BUDGET_BYTES)?;
    m.add("ACK_BYTES", ACK_BYTES)?;
    m.add("TESTBED_HZ", cubiclab_cc::clock::TESTBED_HZ)?;
    m.add("CA_STATES", CaState::ALL.map(CaState::name).to_vec())?;
    Ok(())
}
