//! Random (non-congestion) loss on a link, applied to packets as they leave it (after
//! serialization: the corruption of seed 004's fading channel). Each model draws from its
//! own seeded stream. Losses are counted apart from congestion drops.

use crate::rng::Rng;
use crate::Time;

/// A random loss model, tagged by `model`.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(tag = "model", rename_all = "lowercase", deny_unknown_fields)]
pub enum LossSpec {
    None,
    /// Each packet is lost independently with probability `p`.
    Bernoulli {
        p: f64,
    },
    /// Loss events form a Poisson process of `rate_per_s` events per second; each event
    /// loses the next packet to leave the link (seed 004's random-loss model).
    Poisson {
        #[serde(rename = "rate")]
        rate_per_s: f64,
    },
    /// Gilbert–Elliott: a two-state chain stepped per packet; `p_gb` and `p_bg` are the
    /// transition probabilities good→bad and bad→good, `loss_good` and `loss_bad` the loss
    /// probabilities in each state.
    #[serde(rename = "gilbert")]
    GilbertElliott {
        p_gb: f64,
        p_bg: f64,
        loss_good: f64,
        loss_bad: f64,
    },
}

impl LossSpec {
    pub fn validate(&self, field: &str) -> Result<(), String> {
        let prob = |name: &str, v: f64, hi_open: bool| -> Result<(), String> {
            let ok = v.is_finite() && v >= 0.0 && if hi_open { v < 1.0 } else { v <= 1.0 };
            if ok {
                Ok(())
            } else {
                Err(format!("{field}.{name} is {v}; allowed: {}", if hi_open { "[0, 1)" } else { "[0, 1]" }))
            }
        };
        match *self {
            LossSpec::None => Ok(()),
            LossSpec::Bernoulli { p } => prob("p", p, true),
            LossSpec::Poisson { rate_per_s } => {
                if rate_per_s.is_finite() && rate_per_s >= 0.0 {
                    Ok(())
                } else {
                    Err(format!("{field}.rate is {rate_per_s}; allowed: >= 0 events per second"))
                }
            }
            LossSpec::GilbertElliott { p_gb, p_bg, loss_good, loss_bad } => {
                prob("p_gb", p_gb, false)?;
                prob("p_bg", p_bg, false)?;
                prob("loss_good", loss_good, true)?;
                prob("loss_bad", loss_bad, false)
            }
        }
    }
}

/// The running state of a loss model.
pub struct RandomLoss {
    spec: LossSpec,
    rng: Rng,
    /// Poisson: time of the next loss event (pending until a packet leaves).
    next_event: Time,
    bad: bool,
    pub losses: u64,
}

impl RandomLoss {
    pub fn new(spec: LossSpec, rng: Rng) -> Self {
        let mut l = Self { spec, rng, next_event: u64::MAX, bad: false, losses: 0 };
        if let LossSpec::Poisson { rate_per_s } = l.spec {
            l.next_event = l.draw_gap(0, rate_per_s);
        }
        l
    }

    fn draw_gap(&mut self, from: Time, rate: f64) -> Time {
        if rate <= 0.0 {
            return u64::MAX;
        }
        // At least 1 ns: a gap that rounds to 0 would never move past `now` in `lose`.
        from.saturating_add(((self.rng.exponential(1.0 / rate) * 1e9) as Time).max(1))
    }

    /// Whether the packet leaving the link at `now` is lost.
    #[inline]
    pub fn lose(&mut self, now: Time) -> bool {
        let lost = match self.spec {
            LossSpec::None => false,
            LossSpec::Bernoulli { p } => self.rng.uniform() < p,
            LossSpec::Poisson { rate_per_s } => {
                if now >= self.next_event {
                    // Events that fell while no packet left collapse into this one.
                    let mut t = self.next_event;
                    while t <= now {
                        t = self.draw_gap(t, rate_per_s);
                    }
                    self.next_event = t;
                    true
                } else {
                    false
                }
            }
            LossSpec::GilbertElliott { p_gb, p_bg, loss_good, loss_bad } => {
                let flip = self.rng.uniform();
                self.bad = if self.bad { flip >= p_bg } else { flip < p_gb };
                self.rng.uniform() < if self.bad { loss_bad } else { loss_good }
            }
        };
        self.losses += lost as u64;
        lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bernoulli_fraction_within_binomial_error() {
        // n = 200000 packets at p = 0.01: mean 2000, sd sqrt(n p (1-p)) = 44.5; allow 4 sd.
        let mut l = RandomLoss::new(LossSpec::Bernoulli { p: 0.01 }, Rng::new(3, 9));
        let lost = (0..200_000).filter(|&i| l.lose(i * 1000)).count() as f64;
        assert!((lost - 2000.0).abs() < 4.0 * 44.5, "{lost}");
    }

    #[test]
    fn poisson_event_count_within_a_few_sd() {
        // lambda = 5/s over T = 1000 s with a packet every 10 us: about lambda T = 5000
        // events, sd sqrt(5000) = 70.7; allow 4 sd.
        let mut l = RandomLoss::new(LossSpec::Poisson { rate_per_s: 5.0 }, Rng::new(4, 9));
        let mut n = 0u32;
        let mut t = 0;
        while t < 1_000_000_000_000 {
            n += l.lose(t) as u32;
            t += 10_000;
        }
        assert!((n as f64 - 5000.0).abs() < 4.0 * 70.7, "{n}");
    }

    #[test]
    fn gilbert_elliott_stationary_loss() {
        // Stationary P(bad) = p_gb / (p_gb + p_bg) = 0.01 / 0.11 = 0.0909; with losses
        // 0 and 0.5: loss rate 0.04545. n = 1e6: the chain's correlation widens the error;
        // allow 10%.
        let spec = LossSpec::GilbertElliott { p_gb: 0.01, p_bg: 0.1, loss_good: 0.0, loss_bad: 0.5 };
        let mut l = RandomLoss::new(spec, Rng::new(5, 9));
        let lost = (0..1_000_000).filter(|&i| l.lose(i)).count() as f64 / 1e6;
        assert!((lost - 0.04545).abs() < 0.004545, "{lost}");
    }

    #[test]
    fn bad_probabilities_are_refused() {
        assert!(LossSpec::Bernoulli { p: 1.0 }.validate("loss").unwrap_err().contains("[0, 1)"));
        assert!(LossSpec::Poisson { rate_per_s: -1.0 }.validate("loss").is_err());
    }
}
