//! Memory of a server: the proportional set size (PSS) of every process of
//! its process group, from `/proc/PID/smaps_rollup`, summed, and the peak of
//! that sum over a window.
//!
//! PSS, not RSS: pages two workers share (a forked copy of the weights, the
//! interpreter's text) count half to each, so the sum over the group is what
//! the server costs the machine, and a second copy of a model shows as a
//! second copy. Where the file cannot be read (not Linux, a kernel before
//! 4.14, another user's process) there is no figure, and the note says why.

use std::fs;
use std::io;

use serde::Serialize;

use super::schedstat::group_members;

/// The group's PSS at its peak over a window, and where it was measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct GroupPss {
    /// The largest sum over the group's processes seen in the window.
    pub peak_kib: u64,
    /// Each process's PSS at that peak: (pid, KiB), by pid.
    pub per_process_kib: Vec<(i32, u64)>,
    /// Samples taken in the window.
    pub samples: u32,
}

impl GroupPss {
    /// The peak in MiB, for tables.
    pub fn peak_mib(&self) -> f64 {
        self.peak_kib as f64 / 1024.0
    }
}

/// The `Pss:` line of one smaps_rollup text, in KiB.
pub fn parse_rollup(text: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix("Pss:")?;
        let mut words = rest.split_whitespace();
        let kib = words.next()?.parse().ok()?;
        (words.next() == Some("kB")).then_some(kib)
    })
}

/// One process's PSS in KiB.
pub fn of_pid(pid: i32) -> io::Result<u64> {
    let text = fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))?;
    parse_rollup(&text).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("/proc/{pid}/smaps_rollup has no Pss line"),
        )
    })
}

/// Each process of the group and its PSS; a process that ended between
/// the scan and the read is left out.
pub fn of_group(pgid: i32) -> io::Result<Vec<(i32, u64)>> {
    let mut pids = group_members(pgid)?;
    pids.sort_unstable();
    let mut out = Vec::with_capacity(pids.len());
    let mut first_error = None;
    for pid in pids {
        match of_pid(pid) {
            Ok(kib) => out.push((pid, kib)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match (out.is_empty(), first_error) {
        (true, Some(e)) => Err(e),
        _ => Ok(out),
    }
}

/// The peak of the group's summed PSS over samples taken in a window.
#[derive(Debug, Default)]
pub struct PeakTracker {
    best: Option<GroupPss>,
    samples: u32,
    error: Option<String>,
}

impl PeakTracker {
    /// Reads the group now and keeps the sample if it is the largest.
    pub fn sample(&mut self, pgid: i32) {
        match of_group(pgid) {
            Ok(per) => self.add(per),
            Err(e) => {
                self.error
                    .get_or_insert_with(|| format!("cannot read PSS of process group {pgid}: {e}"));
            }
        }
    }

    /// Adds one sample of (pid, KiB).
    pub fn add(&mut self, per_process_kib: Vec<(i32, u64)>) {
        self.samples += 1;
        let total: u64 = per_process_kib.iter().map(|(_, k)| k).sum();
        if self.best.as_ref().is_none_or(|b| total > b.peak_kib) {
            self.best = Some(GroupPss {
                peak_kib: total,
                per_process_kib,
                samples: 0,
            });
        }
    }

    /// The peak, or why there is none.
    pub fn finish(self) -> Result<GroupPss, String> {
        match self.best {
            Some(mut b) => {
                b.samples = self.samples;
                Ok(b)
            }
            None => Err(self
                .error
                .unwrap_or_else(|| "no PSS sample in the window".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_pss_line_and_refuses_others() {
        let text = "55d0-7ff r--p 00000000 00:00 0 [rollup]\nRss:  120480 kB\nPss:   98312 kB\nPss_Anon: 80000 kB\n";
        assert_eq!(parse_rollup(text), Some(98312));
        assert_eq!(parse_rollup("Rss: 12 kB\nPss_Anon: 3 kB\n"), None);
        assert_eq!(parse_rollup("Pss: 12 MB\n"), None);
        assert_eq!(parse_rollup("Pss: lots kB\n"), None);
    }

    #[test]
    fn the_peak_is_the_largest_sum_not_the_last() {
        let mut t = PeakTracker::default();
        t.add(vec![(1, 100), (2, 50)]);
        t.add(vec![(1, 120), (2, 60)]);
        t.add(vec![(1, 90)]);
        let p = t.finish().unwrap();
        assert_eq!(p.peak_kib, 180);
        assert_eq!(p.per_process_kib, vec![(1, 120), (2, 60)]);
        assert_eq!(p.samples, 3);
        assert!(PeakTracker::default().finish().is_err());
    }

    #[test]
    fn a_real_process_has_a_pss_and_a_missing_one_has_none() {
        if !std::path::Path::new("/proc/self/smaps_rollup").exists() {
            return; // not Linux >= 4.14: the figure is absent, by design
        }
        let me = of_pid(std::process::id() as i32).unwrap();
        assert!(me > 0);
        assert!(of_pid(i32::MAX).is_err());
    }
}
