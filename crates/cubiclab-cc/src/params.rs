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
    /// Empty for a number. Else the names the value is given by: the value is one of them,
    /// held as its index (so `min` 0, `max` the last index, `default` an index, `integer`),
    /// and a number is taken as an index (a former 0/1 switch keeps its meaning when its
    /// names begin with what 0 and 1 were).
    pub choices: &'static [&'static str],
}

/// The unit of a parameter given by name ([`ParamSpec::choice`]).
pub const CHOICE_UNIT: &str = "name";

impl ParamSpec {
    /// A 0/1 switch, on or off by default.
    pub const fn switch(name: &'static str, on: bool, help: &'static str) -> Self {
        ParamSpec {
            name,
            default: if on { 1.0 } else { 0.0 },
            min: 0.0,
            max: 1.0,
            integer: true,
            unit: "0/1",
            help,
            choices: &[],
        }
    }

    /// A parameter given by name, one of `choices`, `choices[default]` by default.
    pub const fn choice(
        name: &'static str,
        choices: &'static [&'static str],
        default: usize,
        help: &'static str,
    ) -> Self {
        assert!(default < choices.len());
        ParamSpec {
            name,
            default: default as f64,
            min: 0.0,
            max: (choices.len() - 1) as f64,
            integer: true,
            unit: CHOICE_UNIT,
            help,
            choices,
        }
    }

    /// What the parameter allows, for error messages and listings: "one of a, b, c" or
    /// "an integer in [1, 1023] 1/1024".
    pub fn allowed(&self) -> String {
        if self.choices.is_empty() {
            let kind = if self.integer { "an integer" } else { "a number" };
            format!("{kind} in [{}, {}] {}", self.min, self.max, self.unit)
        } else {
            format!("one of {}", self.choices.join(", "))
        }
    }

    /// The default as users write it: the name of a choice, else the number.
    pub fn default_text(&self) -> String {
        match self.choices.get(self.default as usize) {
            Some(name) => (*name).to_string(),
            None => format!("{}", self.default),
        }
    }

    /// The value a given one stands for (a choice's index), or None when it is not allowed.
    fn value_of(&self, given: &ParamValue) -> Option<f64> {
        match given {
            ParamValue::Name(name) => self.choices.iter().position(|c| c == name).map(|i| i as f64),
            &ParamValue::Number(v) => {
                let in_range = v.is_finite() && v >= self.min && v <= self.max;
                (in_range && !(self.integer && v.fract() != 0.0)).then_some(v)
            }
        }
    }
}

/// A parameter value as given: a number, or a name for a parameter with choices.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    Number(f64),
    Name(String),
}

impl From<f64> for ParamValue {
    fn from(v: f64) -> Self {
        ParamValue::Number(v)
    }
}

impl From<&str> for ParamValue {
    fn from(name: &str) -> Self {
        ParamValue::Name(name.to_string())
    }
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Number(v) => write!(f, "{v}"),
            ParamValue::Name(name) => write!(f, "'{name}'"),
        }
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
    values: BTreeMap<String, ParamValue>,
}

impl Params {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set(mut self, name: &str, value: impl Into<ParamValue>) -> Self {
        self.values.insert(name.to_string(), value.into());
        self
    }

    pub fn insert(&mut self, name: &str, value: impl Into<ParamValue>) {
        self.values.insert(name.to_string(), value.into());
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &ParamValue)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Check every given name against `specs` and every value against its range or
    /// choices, then return a reader that yields values (a choice's index) or defaults.
    pub fn check(&self, algorithm: &str, specs: &[ParamSpec]) -> Result<Resolved, ParamError> {
        let mut values: Vec<_> = specs.iter().map(|s| (s.name, s.default, s.choices)).collect();
        for (name, given) in &self.values {
            let Some(i) = specs.iter().position(|s| s.name == name) else {
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
            let spec = &specs[i];
            values[i].1 = spec.value_of(given).ok_or_else(|| {
                ParamError(format!(
                    "parameter '{name}' of algorithm '{algorithm}' is {given}; allowed: {} ({})",
                    spec.allowed(),
                    spec.help
                ))
            })?;
        }
        Ok(Resolved { values })
    }
}

/// Parameter values after checking: every spec has a value (given or default).
#[derive(Clone, Debug)]
pub struct Resolved {
    /// (name, value, the spec's choices).
    values: Vec<(&'static str, f64, &'static [&'static str])>,
}

impl Resolved {
    fn get(&self, name: &str) -> (f64, &'static [&'static str]) {
        self.values
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|&(_, v, choices)| (v, choices))
            .unwrap_or_else(|| panic!("parameter '{name}' has no spec"))
    }

    /// The value of `name` (a choice: its index); panics if `name` was not in the specs (a
    /// programming error).
    pub fn f64(&self, name: &str) -> f64 {
        self.get(name).0
    }

    /// The name chosen for `name`; panics if `name` is not a parameter with choices (a
    /// programming error).
    pub fn choice(&self, name: &str) -> &'static str {
        let (v, choices) = self.get(name);
        choices.get(v as usize).unwrap_or_else(|| panic!("parameter '{name}' has no choices"))
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
        choices: &[],
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

    const HYSTART: ParamSpec = ParamSpec::choice("hystart", &["off", "hystart", "hystart++"], 1, "slow start");

    #[test]
    fn choices_are_names_or_their_index() {
        let r = |p: Params| p.check("cubic", &[HYSTART]).map(|r| (r.u32("hystart"), r.choice("hystart")));
        assert_eq!(r(Params::new()), Ok((1, "hystart")));
        assert_eq!(r(Params::new().set("hystart", "hystart++")), Ok((2, "hystart++")));
        // The former 0/1 switch: 0 is "off", 1 "hystart".
        assert_eq!(r(Params::new().set("hystart", 0.0)), Ok((0, "off")));
        let err = r(Params::new().set("hystart", "hystart+")).unwrap_err();
        assert_eq!(
            err.0,
            "parameter 'hystart' of algorithm 'cubic' is 'hystart+'; allowed: one of off, hystart, hystart++ (slow start)"
        );
        assert!(r(Params::new().set("hystart", 3.0)).unwrap_err().0.contains("one of off, hystart, hystart++"));
        // A name for a number is refused with the number's range.
        let err = Params::new().set("beta", "high").check("cubic", SPECS).unwrap_err();
        assert!(err.0.contains("is 'high'; allowed: an integer in [1, 1023] 1/1024"), "{err}");
        assert_eq!((HYSTART.default_text(), SPECS[0].default_text()), ("hystart".to_string(), "717".to_string()));
    }

    #[test]
    fn defaults_fill_in() {
        let r = Params::new().check("cubic", SPECS).unwrap();
        assert_eq!(r.u32("beta"), 717);
    }
}
