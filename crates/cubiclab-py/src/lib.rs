//! Python bindings: conversions and error mapping only. Rust errors become `ValueError`
//! with the library's message; a panic becomes a Python exception, never an abort.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use cubiclab_cc::replay::{parse_trace_csv, replay, ReplayStart};
use cubiclab_cc::{Algorithm, Params, ALGORITHMS};

fn params_from(set: Option<&Bound<'_, PyDict>>) -> PyResult<Params> {
    let mut p = Params::new();
    if let Some(d) = set {
        for (k, v) in d.iter() {
            let name: String = k.extract()?;
            let value: f64 = v.extract().map_err(|_| {
                PyValueError::new_err(format!("parameter '{name}' must be a number, got {v}"))
            })?;
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
            return Err(PyValueError::new_err(
                "initial_cwnd must be at least 1 segment",
            ));
        }
        start.cwnd = c;
    }
    if let Some(s) = initial_ssthresh {
        if s < 2 {
            return Err(PyValueError::new_err(
                "initial_ssthresh must be at least 2 segments",
            ));
        }
        start.ssthresh = s;
    }
    let rows = py.allow_threads(|| replay(alg, start, &events));
    let out = PyDict::new(py);
    out.set_item(
        "time_us",
        rows.iter().map(|r| r.time_us).collect::<Vec<_>>(),
    )?;
    out.set_item("event", rows.iter().map(|r| r.event).collect::<Vec<_>>())?;
    out.set_item("cwnd", rows.iter().map(|r| r.cwnd).collect::<Vec<_>>())?;
    out.set_item(
        "ssthresh",
        rows.iter().map(|r| r.ssthresh).collect::<Vec<_>>(),
    )?;
    out.set_item(
        "cwnd_cnt",
        rows.iter().map(|r| r.cwnd_cnt).collect::<Vec<_>>(),
    )?;
    out.set_item(
        "ca_state",
        rows.iter()
            .map(|r| format!("{:?}", r.ca_state))
            .collect::<Vec<_>>(),
    )?;
    if let Some(first) = rows.first() {
        for (i, (name, _)) in first.vars.iter().enumerate() {
            out.set_item(
                *name,
                rows.iter()
                    .map(|r| r.vars.get(i).map_or(f64::NAN, |v| v.1))
                    .collect::<Vec<_>>(),
            )?;
        }
    }
    Ok(out)
}

/// The registry: a list of (name, reference, [(param, default, min, max, integer, help)]).
#[pyfunction]
fn algorithms() -> Vec<(
    &'static str,
    &'static str,
    Vec<(&'static str, f64, f64, f64, bool, &'static str)>,
)> {
    ALGORITHMS
        .iter()
        .map(|a| {
            (
                a.name,
                a.reference,
                a.params
                    .iter()
                    .map(|p| (p.name, p.default, p.min, p.max, p.integer, p.help))
                    .collect(),
            )
        })
        .collect()
}

/// Check an algorithm name and parameters without running anything.
#[pyfunction]
#[pyo3(signature = (algorithm, params=None))]
fn check_algorithm(algorithm: &str, params: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    let p = params_from(params)?;
    Algorithm::new(algorithm, &p)
        .map(|_| ())
        .map_err(|e| PyValueError::new_err(e.0))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(replay_csv, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(check_algorithm, m)?)?;
    Ok(())
}
