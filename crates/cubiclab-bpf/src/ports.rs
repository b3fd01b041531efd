//! The library algorithms that have a BPF port, the object each one is, and how its
//! parameters reach the object.

use cubiclab_cc::params::ParamSpec;
use cubiclab_cc::{registry, Algorithm, ParamError, Params};

/// One port: the library name, a short tag for registered names, the compiled object, what
/// its arithmetic changes against the library algorithm (empty: nothing), and the library
/// algorithm that computes exactly what the port does (its per-ACK check replays that one).
pub struct Port {
    pub algorithm: &'static str,
    pub tag: &'static str,
    pub object: &'static [u8],
    pub fixed_point: &'static str,
    pub exact_twin: &'static str,
}

macro_rules! object {
    ($stem:literal) => {
        include_bytes!(concat!(env!("OUT_DIR"), "/", $stem, ".bpf.o"))
    };
}

pub const PORTS: &[Port] = &[
    Port { algorithm: "cubic-2.2", tag: "c22", object: object!("cubic22"), fixed_point: "", exact_twin: "cubic-2.2" },
    Port { algorithm: "cubic-2.0", tag: "c20", object: object!("cubic20"), fixed_point: "", exact_twin: "cubic-2.0" },
    Port {
        algorithm: "cubic-2008",
        tag: "c08",
        object: object!("cubic2008"),
        fixed_point: "jiffies; t and K in 2^-10 s; C to 2^-10; whole-segment target; W_tcp in 2^-32 segments; \
                      at most 128 segments per ACK (cubic-2008-fixed, within 2 segments of cubic-2008)",
        exact_twin: "cubic-2008-fixed",
    },
    Port {
        algorithm: "cubic-2005",
        tag: "c05",
        object: object!("cubic2005"),
        fixed_point: "microsecond clock; t + RTT and K in 2^-10 s; C and S_max to 2^-10; whole-segment target; \
                      W_tcp in 2^-20 segments (cubic-2005-fixed, within 2 segments of cubic-2005)",
        exact_twin: "cubic-2005-fixed",
    },
    Port {
        algorithm: "cubic-rfc9438",
        tag: "rfc",
        object: object!("cubic_rfc9438"),
        fixed_point: "microsecond clock; t, t + RTT and K in 2^-10 s; W_max, W_cubic and the target in 2^-10 \
                      segments; C to 2^-10; W_est in 2^-20 segments (cubic-rfc9438-fixed, within 2 segments of \
                      cubic-rfc9438)",
        exact_twin: "cubic-rfc9438-fixed",
    },
    Port { algorithm: "bic", tag: "bic", object: object!("bic"), fixed_point: "", exact_twin: "bic" },
    Port { algorithm: "highspeed", tag: "hs", object: object!("highspeed"), fixed_point: "", exact_twin: "highspeed" },
    Port { algorithm: "htcp", tag: "htcp", object: object!("htcp"), fixed_point: "", exact_twin: "htcp" },
    Port { algorithm: "scalable", tag: "scal", object: object!("scalable"), fixed_point: "", exact_twin: "scalable" },
];

/// Why the objects are missing, or None when they were built.
pub fn build_problem() -> Option<&'static str> {
    match env!("CUBICLAB_BPF_BUILD") {
        "ok" => None,
        reason => Some(reason),
    }
}

pub fn find(algorithm: &str) -> Result<&'static Port, String> {
    PORTS.iter().find(|p| p.algorithm == algorithm).ok_or_else(|| {
        format!(
            "'{algorithm}' has no BPF port; ported: {}",
            PORTS.iter().map(|p| p.algorithm).collect::<Vec<_>>().join(", ")
        )
    })
}

/// `PARAM[]` of common.h: every parameter of the library algorithm in its spec order, the
/// given value or the default; integers as they are, real numbers in millionths.
/// Parameters are checked by the library (same names, ranges and errors).
pub fn param_values(port: &Port, params: &Params) -> Result<Vec<u64>, ParamError> {
    Algorithm::new(port.algorithm, params)?;
    let specs: &[ParamSpec] = registry::info(port.algorithm).expect("every port is in the registry").params;
    if params.iter().any(|(k, _)| k == "hz") {
        return Err(ParamError(format!(
            "parameter 'hz' of '{}' cannot be set on the kernel: the port runs on the kernel's own jiffies",
            port.algorithm
        )));
    }
    let given: Vec<(&str, f64)> = params.iter().collect();
    Ok(specs
        .iter()
        .map(|s| {
            let v = given.iter().find(|(k, _)| *k == s.name).map_or(s.default, |(_, v)| *v);
            if s.integer {
                v as u64
            } else {
                (v * 1e6).round() as u64
            }
        })
        .collect())
}
