//! Per-instance algorithm parameters, checked by name and range before anything runs.

use std::collections::BTreeMap;
use std::fmt;

/// One settable parameter of an algorithm, for help text and error messages.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamSpec {
    pub name: &'static str,
    pub default: f64,
    pub min: f64,
    pub max: f64,
    /// Integer-valued (booleans are integers in 0..=1).
    pub integer: bool,
    /// The unit the algorithm's code reads the value in: "segments", "us", "Hz", "1/1024"
    /// (Linux's fixed-point beta), "fraction kept" or "fraction removed" (the papers'
    /// betas differ), "0/1" for a switch.
    pub unit: &'static str,
    pub help: &'static str,
}

impl ParamSpec {
    /// A 0/1 switch, on or off by default.
    pub const fn switch(name: &'static str, on: bool, help: &'static str) -> Self {
        ParamSpec { name, default: if on { 1.0 } else { 0.0 }, min: 0.0, max: 1.0, integer: true, unit: "0/1", help }
    }
}

/// A bad algorithm name or parameter: the message names it and what is allowed.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamError(pub String);

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParamError {}

/// Parameters that changed name: (algorithms, old name, new name, what the new one is). Given
/// under the old name, the error says what it became rather than that it is unknown.
const RENAMED: &[(&[&str], &str, &str, &str)] = &[
    (
        &["cubic-2008", "cubic-2008-fixed"],
        "beta",
        "decrease",
        "the fraction of the window removed at a loss, seed 000's beta; the other CUBICs' beta is the fraction kept",
    ),
    (&["vegas"], "alpha", "queue_min", "Linux's alpha, segments queued below which the window grows"),
    (&["vegas"], "beta", "queue_max", "Linux's beta, segments queued above which the window shrinks"),
    (&["vegas"], "gamma", "queue_slow_start", "Linux's gamma, segments queued that end slow start"),
];

/// Parameter values given by the user, read once by an algorithm's constructor.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params {
    values: BTreeMap<String, f64>,
}

impl Params {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set(mut self, name: &str, value: f64) -> Self {
        self.values.insert(name.to_string(), value);
        self
    }

    pub fn insert(&mut self, name: &str, value: f64) {
        self.values.insert(name.to_string(), value);
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> {
        self.values.iter().map(|(k, v)| (k.as_str(), *v))
    }

    /// Check every given name against `specs` and every value against its range,
    /// then return a reader that yields values or defaults.
    pub fn check(&self, algorithm: &str, specs: &[ParamSpec]) -> Result<Resolved, ParamError> {
        for (name, &value) in &self.values {
            let Some(spec) = specs.iter().find(|s| s.name == name) else {
                if let Some((_, _, new, what)) = RENAMED.iter().find(|r| r.0.contains(&algorithm) && r.1 == name) {
                    return Err(ParamError(format!(
                        "parameter '{name}' of algorithm '{algorithm}' is now '{new}' ({what})"
                    )));
                }
                let allowed: Vec<&str> = specs.iter().map(|s| s.name).collect();
                return Err(ParamError(format!(
                    "unknown parameter '{name}' for algorithm '{algorithm}'; allowed: {}",
                    if allowed.is_empty() { "none".to_string() } else { allowed.join(", ") }
                )));
            };
            let in_range = value.is_finite() && value >= spec.min && value <= spec.max;
            if !in_range || (spec.integer && value.fract() != 0.0) {
                return Err(ParamError(format!(
                    "parameter '{name}' of algorithm '{algorithm}' is {value}; allowed: {} in [{}, {}] {} ({})",
                    if spec.integer { "an integer" } else { "a number" },
                    spec.min,
                    spec.max,
                    spec.unit,
                    spec.help
                )));
            }
        }
        let mut values = Vec::with_capacity(specs.len());
        for spec in specs {
            values.push((spec.name, *self.values.get(spec.name).unwrap_or(&spec.default)));
        }
        Ok(Resolved { values })
    }
}

/// Parameter values after checking: every spec has a value (given or default).
#[derive(Clone, Debug)]
pub struct Resolved {
    values: Vec<(&'static str, f64)>,
}

impl Resolved {
    /// The value of `name`; panics if `name` was not in the specs (a programming error).
    pub fn f64(&self, name: &str) -> f64 {
        self.values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| panic!("parameter '{name}' has no spec"))
    }

    pub fn u32(&self, name: &str) -> u32 {
        self.f64(name) as u32
    }

    pub fn u64(&self, name: &str) -> u64 {
        self.f64(name) as u64
    }

    pub fn bool(&self, name: &str) -> bool {
        self.f64(name) != 0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[ParamSpec {
        name: "beta",
        default: 717.0,
        min: 1.0,
        max: 1023.0,
        integer: true,
        unit: "1/1024",
        help: "decrease factor",
    }];

    #[test]
    fn unknown_name_lists_allowed() {
        let err = Params::new().set("bta", 1.0).check("cubic", SPECS).unwrap_err();
        assert!(err.0.contains("'bta'") && err.0.contains("allowed: beta"), "{err}");
    }

    #[test]
    fn out_of_range_names_range() {
        let err = Params::new().set("beta", 2000.0).check("cubic", SPECS).unwrap_err();
        assert!(err.0.contains("[1, 1023] 1/1024 (decrease factor)"), "{err}");
        let err = Params::new().set("beta", 1.5).check("cubic", SPECS).unwrap_err();
        assert!(err.0.contains("integer"), "{err}");
    }

    #[test]
    fn defaults_fill_in() {
        let r = Params::new().check("cubic", SPECS).unwrap();
        assert_eq!(r.u32("beta"), 717);
    }
}
