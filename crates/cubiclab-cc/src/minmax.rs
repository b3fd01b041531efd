//! Linux `lib/win_minmax.c` (Kathleen Nichols' algorithm): a windowed maximum kept in three
//! samples — the best, the second best and the third best in successive quarters of the
//! window — so the maximum over the last `win` time units costs O(1) per update. BBR keeps
//! its bottleneck bandwidth in one, with time counted in packet-timed round trips.
//!
//! Times and windows are `u32` and compared with wrapping subtraction, as in the kernel.

/// One sample: a time and a value (`struct minmax_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MinmaxSample {
    pub t: u32,
    pub v: u32,
}

/// `struct minmax`: the best, second best and third best samples of the window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Minmax {
    pub s: [MinmaxSample; 3],
}

impl Minmax {
    /// `minmax_get`: the windowed extreme.
    #[inline]
    pub fn get(&self) -> u32 {
        self.s[0].v
    }

    /// `minmax_reset`: forget everything; the new sample is all three.
    #[inline]
    pub fn reset(&mut self, t: u32, v: u32) -> u32 {
        let val = MinmaxSample { t, v };
        self.s = [val; 3];
        v
    }

    /// `minmax_running_max`: take a measurement `v` at time `t` into a max over `win`.
    pub fn running_max(&mut self, win: u32, t: u32, v: u32) -> u32 {
        let val = MinmaxSample { t, v };
        if val.v >= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            // A new maximum, or nothing left in the window.
            return self.reset(t, v);
        }
        if val.v >= self.s[1].v {
            self.s[2] = val;
            self.s[1] = val;
        } else if val.v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// `minmax_running_min`: take a measurement `v` at time `t` into a min over `win`
    /// (the kernel's `tcp_min_rtt` filter).
    #[inline]
    pub fn running_min(&mut self, win: u32, t: u32, v: u32) -> u32 {
        // Most samples (one per ACK) beat none of the three while the best is younger than a
        // quarter window: the samples are in time order (s[0].t <= s[1].t <= s[2].t <= t), so
        // none expires, no sub-window ages, and the kernel's code below changes nothing.
        if v > self.s[2].v && t.wrapping_sub(self.s[0].t) <= win / 4 {
            return self.s[0].v;
        }
        self.running_min_update(win, t, v)
    }

    fn running_min_update(&mut self, win: u32, t: u32, v: u32) -> u32 {
        let val = MinmaxSample { t, v };
        if val.v <= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            // A new minimum, or nothing left in the window.
            return self.reset(t, v);
        }
        if val.v <= self.s[1].v {
            self.s[2] = val;
            self.s[1] = val;
        } else if val.v <= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// `minmax_subwin_update`: age the samples. When the best is older than the window,
    /// the second and third move up; a second or third best that has stayed equal to the
    /// one above it for a quarter (resp. half) of the window is replaced by `val`, so the
    /// three keep spanning the window.
    fn subwin_update(&mut self, win: u32, val: MinmaxSample) -> u32 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_maximum_replaces_everything() {
        let mut m = Minmax::default();
        m.reset(0, 100);
        assert_eq!(m.running_max(10, 1, 150), 150);
        assert_eq!(m.s, [MinmaxSample { t: 1, v: 150 }; 3]);
    }

    #[test]
    fn the_maximum_expires_after_the_window() {
        // BBR's window is 10 rounds. A peak of 100 at round 0, then 50 in every round: the
        // peak is reported through round 10 (dt = 10 is not > 10) and is gone at round 11,
        // when the best sample left is a 50.
        let mut m = Minmax::default();
        m.reset(0, 100);
        for t in 1..=10 {
            assert_eq!(m.running_max(10, t, 50), 100, "round {t}");
        }
        assert_eq!(m.running_max(10, 11, 50), 50);
    }

    #[test]
    fn second_best_takes_over_when_the_best_ages_out() {
        // 100 at round 0, 80 at round 3 (dt 3 > win/4 = 2: it becomes the second and third
        // best), 60 afterwards. At round 11 the 100 expires and the 80 (age 8) is reported;
        // it expires in turn at round 14 (dt 11 > 10).
        let mut m = Minmax::default();
        m.reset(0, 100);
        m.running_max(10, 3, 80);
        assert_eq!(m.s[1], MinmaxSample { t: 3, v: 80 });
        for t in 4..=10 {
            assert_eq!(m.running_max(10, t, 60), 100);
        }
        assert_eq!(m.running_max(10, 11, 60), 80);
        assert_eq!(m.running_max(10, 13, 60), 80);
        assert_eq!(m.running_max(10, 14, 60), 60);
    }

    #[test]
    fn the_minimum_expires_after_the_window() {
        // tcp_update_rtt_min's filter: 50 at t = 0, then 80 at every step of a window of 10;
        // 50 holds through t = 10 and is gone at t = 11.
        let mut m = Minmax::default();
        m.reset(0, u32::MAX);
        assert_eq!(m.running_min(10, 0, 50), 50);
        for t in 1..=10 {
            assert_eq!(m.running_min(10, t, 80), 50, "t {t}");
        }
        assert_eq!(m.running_min(10, 11, 80), 80);
    }

    #[test]
    fn the_shortcut_of_running_min_changes_nothing() {
        // The shortcut against the kernel's code alone, on RTT-like samples (a floor with
        // noise, a window of 40 steps, time advancing 0-3 steps): every state and result equal.
        let (mut fast, mut full) = (Minmax::default(), Minmax::default());
        fast.reset(0, u32::MAX);
        full.reset(0, u32::MAX);
        let (mut x, mut t) = (12345u64, 0u32);
        for _ in 0..200_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            t += (x >> 60) as u32 % 4;
            let v = 100 + ((x >> 33) % 50) as u32 + if (x >> 20) % 97 == 0 { 0 } else { 20 };
            assert_eq!(fast.running_min(40, t, v), full.running_min_update(40, t, v));
            assert_eq!(fast.s, full.s);
        }
    }
}
