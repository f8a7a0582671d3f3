//! The trial loop every probe shares: at least `trials.min` trials, then
//! one more at a time until the figures settle the verdict, or `trials.max`;
//! modes alternate order trial by trial (ABBA...) so drift in the machine
//! lands on both alike. And what a probe reports while it runs.

use std::time::Duration;

use serde::Serialize;

use crate::spec::Trials;

/// Progress, for reporters.
#[derive(Debug, Clone, Serialize)]
pub struct TrialProgress {
    pub trial: u32,
    pub of: u32,
}

/// What a probe reports while it runs; the gate turns these into events.
#[derive(Debug, Clone)]
pub enum ProbeEvent {
    /// A server answered its readiness check.
    ServerReady { after: Duration, pgid: i32 },
    /// A trial finished.
    Trial(TrialProgress),
}

/// One trial of the loop.
#[derive(Debug, Clone, Copy)]
pub struct Trial {
    /// 0-based.
    pub index: u32,
    of: u32,
}

impl Trial {
    /// The order of two modes in this trial: [0, 1], then [1, 0], ...
    pub fn order(self) -> [usize; 2] {
        if self.index % 2 == 0 {
            [0, 1]
        } else {
            [1, 0]
        }
    }

    /// The progress to report once this trial is done.
    pub fn done(self) -> ProbeEvent {
        ProbeEvent::Trial(TrialProgress {
            trial: self.index + 1,
            of: self.of,
        })
    }
}

/// The loop: `while let Some(t) = trials.next(|| settled) { ... }`.
#[derive(Debug)]
pub struct TrialLoop {
    budget: Trials,
    started: u32,
}

impl TrialLoop {
    pub fn new(budget: Trials) -> Self {
        Self { budget, started: 0 }
    }

    /// The next trial, or None when the budget is spent or, past the
    /// minimum, `settled()` says the figures already decide the verdict.
    /// `settled` is only asked once the minimum is done.
    pub fn next(&mut self, settled: impl FnOnce() -> bool) -> Option<Trial> {
        if self.started >= self.budget.max {
            return None;
        }
        if self.started >= self.budget.min && settled() {
            return None;
        }
        let t = Trial {
            index: self.started,
            of: self.budget.max,
        };
        self.started += 1;
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(budget: Trials, settled_after: u32) -> u32 {
        let mut done = 0;
        let mut l = TrialLoop::new(budget);
        while let Some(t) = l.next(|| done >= settled_after) {
            assert_eq!(t.index, done);
            done += 1;
        }
        done
    }

    #[test]
    fn runs_the_minimum_then_until_settled_or_the_maximum() {
        let b = Trials { min: 5, max: 15 };
        assert_eq!(count(b, 0), 5, "settled at once: the minimum");
        assert_eq!(count(b, 8), 8, "settled after 8");
        assert_eq!(count(b, 99), 15, "never settled: the maximum");
    }

    #[test]
    fn modes_alternate_order() {
        let mut l = TrialLoop::new(Trials { min: 3, max: 3 });
        let orders: Vec<[usize; 2]> = std::iter::from_fn(|| l.next(|| false))
            .map(|t| t.order())
            .collect();
        assert_eq!(orders, vec![[0, 1], [1, 0], [0, 1]]);
    }
}
