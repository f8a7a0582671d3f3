//! The worker-census table: the workers seen, the fork control, and the
//! cross-process pair where the row asks for one.

use super::judge::CensusFigures;
use crate::probe::pair_ratio;

/// The table of a census's figures.
pub fn table(f: &CensusFigures, s: &mut String) {
    s.push_str(&format!(
        "  workers {:?} (needs >= {}), at the end {:?}; runtime dead in {:?}; app imported in {:?}\n",
        f.workers, f.workers_at_least, f.workers_after, f.dead_runtimes, f.import_pids
    ));
    if let Some(ms) = f.workers_up_ms {
        s.push_str(&format!(
            "  {} workers had answered {ms} ms after the fork control (the server was ready before it)\n",
            f.workers_at_least
        ));
    }
    if let Some(fc) = &f.fork_control {
        s.push_str(&format!(
            "  fork control: parent alive={}, forked child alive={} (check: {})\n",
            fc.parent.alive, fc.child.alive, fc.child.check
        ));
    }
    if let Some(fc) = &f.fork_control {
        for (side, st) in [("parent", &fc.parent), ("child", &fc.child)] {
            if let Some(note) = &st.note {
                s.push_str(&format!("    {side}: {note}\n"));
            }
        }
    }
    if let Some(p) = &f.pss {
        let mib = |kib: u64| kib as f64 / 1024.0;
        let each: Vec<String> = p
            .processes
            .iter()
            .map(|q| {
                format!(
                    "{} {} {:.0} MiB",
                    if q.worker { "worker" } else { "other" },
                    q.pid,
                    mib(q.pss_kib)
                )
            })
            .collect();
        s.push_str(&format!(
            "  pss at the peak: {:.0} MiB over the server's processes ({}; {} samples)\n",
            mib(p.peak_kib),
            each.join(", "),
            p.samples
        ));
    }
    if let Some(n) = &f.pss_note {
        s.push_str(&format!("  pss: {n}\n"));
    }
    if let Some(p) = &f.pair_ratio {
        s.push_str("  parallel across processes:\n");
        pair_ratio::render::table(p, s);
    }
}
