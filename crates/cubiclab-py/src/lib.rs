//! Python bindings: conversions and error mapping only. Rust errors become `ValueError`
//! with the library's message; a panic becomes a Python exception, never an abort.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use cubiclab_cc::replay::{parse_trace_csv, replay, ReplayStart};
use cubiclab_cc::{Algorithm, Params, ALGORITHMS};
use cubiclab_sim::{
    CoDelSpec, Direction, FlowSpec, Limit, LossSpec, QueueKind, Recovery, RedSpec, Results, RttDist, Scenario, Sim,
    WebSpec,
};

fn params_from(set: Option<&Bound<'_, PyDict>>) -> PyResult<Params> {
    let mut p = Params::new();
    if let Some(d) = set {
        for (k, v) in d.iter() {
            let name: String = k.extract()?;
            let value: f64 = v
                .extract()
                .map_err(|_| PyValueError::new_err(format!("parameter '{name}' must be a number, got {v}")))?;
            p.insert(&name, value);
        }
    }
    Ok(p)
}

/// Replay a trace CSV (text) through an algorithm. Returns a dict of columns.
#[pyfunction]
#[pyo3(signature = (algorithm, trace_csv, params=None, initial_cwnd=None, initial_ssthresh=None))]
fn replay_csv<'py>(
    py: Python<'py>,
    algorithm: &str,
    trace_csv: &str,
    params: Option<&Bound<'py, PyDict>>,
    initial_cwnd: Option<u32>,
    initial_ssthresh: Option<u32>,
) -> PyResult<Bound<'py, PyDict>> {
    let p = params_from(params)?;
    let alg = Algorithm::new(algorithm, &p).map_err(|e| PyValueError::new_err(e.0))?;
    let events = parse_trace_csv(trace_csv).map_err(PyValueError::new_err)?;
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
    let rows = py.allow_threads(|| replay(alg, start, &events));
    let out = PyDict::new(py);
    out.set_item("time_us", rows.iter().map(|r| r.time_us).collect::<Vec<_>>())?;
    out.set_item("event", rows.iter().map(|r| r.event).collect::<Vec<_>>())?;
    out.set_item("cwnd", rows.iter().map(|r| r.cwnd).collect::<Vec<_>>())?;
    out.set_item("ssthresh", rows.iter().map(|r| r.ssthresh).collect::<Vec<_>>())?;
    out.set_item("cwnd_cnt", rows.iter().map(|r| r.cwnd_cnt).collect::<Vec<_>>())?;
    out.set_item("ca_state", rows.iter().map(|r| format!("{:?}", r.ca_state)).collect::<Vec<_>>())?;
    if let Some(first) = rows.first() {
        for (i, (name, _)) in first.vars.iter().enumerate() {
            out.set_item(*name, rows.iter().map(|r| r.vars.get(i).map_or(f64::NAN, |v| v.1)).collect::<Vec<_>>())?;
        }
    }
    Ok(out)
}

/// The registry: a list of (name, reference, [(param, default, min, max, integer, help)]).
#[pyfunction]
fn algorithms() -> Vec<(&'static str, &'static str, Vec<(&'static str, f64, f64, f64, bool, &'static str)>)> {
    ALGORITHMS
        .iter()
        .map(|a| {
            (
                a.name,
                a.reference,
                a.params.iter().map(|p| (p.name, p.default, p.min, p.max, p.integer, p.help)).collect(),
            )
        })
        .collect()
}

/// Check an algorithm name and parameters without running anything.
#[pyfunction]
#[pyo3(signature = (algorithm, params=None))]
fn check_algorithm(algorithm: &str, params: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    let p = params_from(params)?;
    Algorithm::new(algorithm, &p).map(|_| ()).map_err(|e| PyValueError::new_err(e.0))
}

fn get<'py, T: FromPyObject<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<T> {
    d.get_item(key)?
        .ok_or_else(|| PyValueError::new_err(format!("scenario: missing key '{key}'")))?
        .extract()
        .map_err(|e| PyValueError::new_err(format!("scenario: key '{key}': {e}")))
}

fn get_opt<'py, T: FromPyObject<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<T>> {
    match d.get_item(key)? {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => v.extract().map(Some).map_err(|e| PyValueError::new_err(format!("scenario: key '{key}': {e}"))),
    }
}

fn limit_from(kind: &str, value: u64, field: &str) -> PyResult<Limit> {
    match kind {
        "packets" => Ok(Limit::Packets(value.min(u32::MAX as u64) as u32)),
        "bytes" => Ok(Limit::Bytes(value)),
        _ => Err(PyValueError::new_err(format!("{field}: unit '{kind}'; allowed: packets, bytes"))),
    }
}

fn loss_from(d: Option<Bound<'_, PyDict>>, field: &str) -> PyResult<LossSpec> {
    let Some(d) = d else { return Ok(LossSpec::None) };
    let model: String = get(&d, "model")?;
    Ok(match model.as_str() {
        "none" => LossSpec::None,
        "bernoulli" => LossSpec::Bernoulli { p: get(&d, "p")? },
        "poisson" => LossSpec::Poisson { rate_per_s: get(&d, "rate")? },
        "gilbert" => LossSpec::GilbertElliott {
            p_gb: get(&d, "p_gb")?,
            p_bg: get(&d, "p_bg")?,
            loss_good: get(&d, "loss_good")?,
            loss_bad: get(&d, "loss_bad")?,
        },
        other => {
            return Err(PyValueError::new_err(format!(
                "{field}.model is '{other}'; allowed: none, bernoulli, poisson, gilbert"
            )))
        }
    })
}

fn recovery_from(s: &str) -> PyResult<Recovery> {
    match s {
        "sack" => Ok(Recovery::Sack),
        "newreno" => Ok(Recovery::NewReno),
        other => Err(PyValueError::new_err(format!("recovery '{other}'; allowed: sack, newreno"))),
    }
}

/// Build a simulator scenario from the flat dict `cubiclab.scenario` produces (integers in
/// bits/s, ns and bytes).
fn scenario_from(d: &Bound<'_, PyDict>) -> PyResult<Scenario> {
    let mut flows = Vec::new();
    let list: Vec<Bound<'_, PyDict>> = get(d, "flows")?;
    for f in &list {
        let params: Option<Bound<'_, PyDict>> = get_opt(f, "params")?;
        let recovery: String = get(f, "recovery")?;
        flows.push(FlowSpec {
            group: get(f, "group")?,
            algorithm: get(f, "algorithm")?,
            params: params_from(params.as_ref())?,
            rtt_ns: get(f, "rtt_ns")?,
            start_ns: get(f, "start_ns")?,
            stop_ns: get_opt(f, "stop_ns")?,
            bytes: get_opt(f, "bytes")?,
            recovery: recovery_from(&recovery)?,
            ack_every: get(f, "ack_every")?,
            delack_timeout_ns: get(f, "delack_timeout_ns")?,
            rwnd: get(f, "rwnd")?,
            initial_cwnd: get(f, "initial_cwnd")?,
            initial_ssthresh: get_opt(f, "initial_ssthresh")?,
        });
    }
    let mut web = Vec::new();
    let wl: Vec<Bound<'_, PyDict>> = get_opt(d, "web")?.unwrap_or_default();
    for w in &wl {
        let params: Option<Bound<'_, PyDict>> = get_opt(w, "params")?;
        let direction: String = get(w, "direction")?;
        let rtt_kind: String = get(w, "rtt_kind")?;
        let recovery: String = get(w, "recovery")?;
        web.push(WebSpec {
            group: get(w, "group")?,
            sessions: get(w, "sessions")?,
            direction: match direction.as_str() {
                "forward" => Direction::Forward,
                "reverse" => Direction::Reverse,
                other => {
                    return Err(PyValueError::new_err(format!("web direction '{other}'; allowed: forward, reverse")))
                }
            },
            mean_size_bytes: get(w, "mean_size_bytes")?,
            shape: get(w, "shape")?,
            max_size_ratio: get(w, "max_size_ratio")?,
            think_mean_ns: get(w, "think_ns")?,
            rtt: if rtt_kind == "exp" {
                RttDist::Exponential(get(w, "rtt_ns")?)
            } else {
                RttDist::Fixed(get(w, "rtt_ns")?)
            },
            algorithm: get(w, "algorithm")?,
            params: params_from(params.as_ref())?,
            recovery: recovery_from(&recovery)?,
        });
    }
    let queue: Option<Bound<'_, PyDict>> = get_opt(d, "queue")?;
    let queue = match queue {
        None => QueueKind::DropTail,
        Some(q) => {
            let kind: String = get(&q, "kind")?;
            match kind.as_str() {
                "droptail" => QueueKind::DropTail,
                "red" => QueueKind::Red(RedSpec {
                    min_th: get(&q, "min_th")?,
                    max_th: get(&q, "max_th")?,
                    max_p: get(&q, "max_p")?,
                    w_q: get(&q, "w_q")?,
                    gentle: get(&q, "gentle")?,
                }),
                "codel" => QueueKind::CoDel(CoDelSpec {
                    target_ns: get(&q, "target_ns")?,
                    interval_ns: get(&q, "interval_ns")?,
                }),
                other => {
                    return Err(PyValueError::new_err(format!(
                        "bottleneck.queue is '{other}'; allowed: droptail, red, codel"
                    )))
                }
            }
        }
    };
    let buffer_kind: String = get(d, "buffer_kind")?;
    let rbuffer_kind: String = get(d, "reverse_buffer_kind")?;
    Ok(Scenario {
        seed: get(d, "seed")?,
        duration_ns: get(d, "duration_ns")?,
        mss: get(d, "mss")?,
        header_bytes: get(d, "header_bytes")?,
        ack_bytes: get(d, "ack_bytes")?,
        rate_bps: get(d, "rate_bps")?,
        delay_ns: get(d, "delay_ns")?,
        buffer: limit_from(&buffer_kind, get(d, "buffer")?, "bottleneck.buffer")?,
        reverse_buffer: limit_from(&rbuffer_kind, get(d, "reverse_buffer")?, "bottleneck.reverse_buffer")?,
        queue,
        loss: loss_from(get_opt(d, "loss")?, "bottleneck.loss")?,
        reverse_loss: loss_from(get_opt(d, "reverse_loss")?, "bottleneck.reverse_loss")?,
        flows,
        web,
        sample_interval_ns: get(d, "sample_interval_ns")?,
        start_jitter_ns: get(d, "start_jitter_ns")?,
        min_rto_ns: get(d, "min_rto_ns")?,
        record_cwnd_changes: get(d, "record_cwnd_changes")?,
        record_rtt_samples: get(d, "record_rtt_samples")?,
    })
}

/// A simulation run in steps, so Python can show progress and be interrupted.
#[pyclass]
struct Simulation {
    sim: Option<Sim>,
}

#[pymethods]
impl Simulation {
    #[new]
    fn new(spec: &Bound<'_, PyDict>) -> PyResult<Self> {
        let sc = scenario_from(spec)?;
        let sim = Sim::new(sc).map_err(PyValueError::new_err)?;
        Ok(Self { sim: Some(sim) })
    }

    /// Advance to simulated time `until_ns`; true when the run is complete.
    fn run_until(&mut self, py: Python<'_>, until_ns: u64) -> PyResult<bool> {
        let sim = self.sim.as_mut().ok_or_else(|| PyValueError::new_err("simulation already finished"))?;
        Ok(py.allow_threads(move || sim.run_until(until_ns)))
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
        let sim = self.sim.take().ok_or_else(|| PyValueError::new_err("simulation already finished"))?;
        results_to_py(py, sim.finish())
    }
}

fn results_to_py<'py>(py: Python<'py>, r: Results) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    let f = PyDict::new(py);
    f.set_item("t_ns", r.flows.t_ns)?;
    f.set_item("flow", r.flows.flow)?;
    f.set_item("cwnd", r.flows.cwnd)?;
    f.set_item("ssthresh", r.flows.ssthresh)?;
    f.set_item("srtt_us", r.flows.srtt_us)?;
    f.set_item("throughput_bps", r.flows.throughput_bps)?;
    f.set_item("goodput_bps", r.flows.goodput_bps)?;
    f.set_item("drops", r.flows.drops)?;
    f.set_item("retransmits", r.flows.retransmits)?;
    f.set_item("ca_state", r.flows.ca_state.iter().map(|&x| x as u32).collect::<Vec<_>>())?;
    out.set_item("flows", f)?;
    let l = PyDict::new(py);
    l.set_item("t_ns", r.link.t_ns)?;
    l.set_item("queue_packets", r.link.queue_packets)?;
    l.set_item("queue_bytes", r.link.queue_bytes)?;
    l.set_item("drops", r.link.drops)?;
    l.set_item("random_losses", r.link.random_losses)?;
    l.set_item("utilization", r.link.utilization)?;
    out.set_item("link", l)?;
    let c = PyDict::new(py);
    c.set_item("t_ns", r.traces.cwnd_t_ns)?;
    c.set_item("flow", r.traces.cwnd_flow)?;
    c.set_item("cwnd", r.traces.cwnd)?;
    c.set_item("ssthresh", r.traces.cwnd_ssthresh)?;
    out.set_item("cwnd", c)?;
    let t = PyDict::new(py);
    t.set_item("t_ns", r.traces.rtt_t_ns)?;
    t.set_item("flow", r.traces.rtt_flow)?;
    t.set_item("rtt_us", r.traces.rtt_us)?;
    out.set_item("rtt", t)?;
    let lo = PyDict::new(py);
    lo.set_item("t_ns", r.traces.loss_t_ns)?;
    lo.set_item("flow", r.traces.loss_flow)?;
    lo.set_item("cwnd", r.traces.loss_cwnd)?;
    lo.set_item("timeout", r.traces.loss_timeout)?;
    out.set_item("losses", lo)?;
    let tt = PyDict::new(py);
    let tot = &r.totals;
    tt.set_item("flow", tot.iter().map(|x| x.flow).collect::<Vec<_>>())?;
    tt.set_item("group", tot.iter().map(|x| x.group.clone()).collect::<Vec<_>>())?;
    tt.set_item("algorithm", tot.iter().map(|x| x.algorithm.clone()).collect::<Vec<_>>())?;
    tt.set_item("rtt_ns", tot.iter().map(|x| x.rtt_ns).collect::<Vec<_>>())?;
    tt.set_item("start_ns", tot.iter().map(|x| x.start_ns).collect::<Vec<_>>())?;
    tt.set_item("segments_sent", tot.iter().map(|x| x.segments_sent).collect::<Vec<_>>())?;
    tt.set_item("retransmits", tot.iter().map(|x| x.retransmits).collect::<Vec<_>>())?;
    tt.set_item("timeouts", tot.iter().map(|x| x.timeouts).collect::<Vec<_>>())?;
    tt.set_item("loss_events", tot.iter().map(|x| x.loss_events).collect::<Vec<_>>())?;
    tt.set_item("drops", tot.iter().map(|x| x.drops).collect::<Vec<_>>())?;
    tt.set_item("random_losses", tot.iter().map(|x| x.random_losses).collect::<Vec<_>>())?;
    tt.set_item("delivered_bytes", tot.iter().map(|x| x.delivered_bytes).collect::<Vec<_>>())?;
    tt.set_item("fct_ns", tot.iter().map(|x| x.fct_ns).collect::<Vec<_>>())?;
    out.set_item("totals", tt)?;
    let w = PyDict::new(py);
    w.set_item("t_ns", r.web.t_ns)?;
    w.set_item("session", r.web.session)?;
    w.set_item("group", r.web.group)?;
    w.set_item("bytes", r.web.bytes)?;
    w.set_item("fct_ns", r.web.fct_ns)?;
    out.set_item("web", w)?;
    out.set_item("web_forward_delivered_bytes", r.web_forward_delivered_bytes)?;
    out.set_item("bottleneck_random_losses", r.bottleneck_random_losses)?;
    out.set_item("events", r.events)?;
    out.set_item("sim_ns", r.sim_ns)?;
    out.set_item("bottleneck_tx_bytes", r.bottleneck_tx_bytes)?;
    out.set_item("bottleneck_drops", r.bottleneck_drops)?;
    Ok(out)
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
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(check_algorithm, m)?)?;
    m.add_function(wrap_pyfunction!(emulate, m)?)?;
    Ok(())
}
