//! The terminal report of `runner advise`: each question with its figures,
//! then the recommendation (or why there is none).

use std::fmt::Write;

use super::AdviceReport;

pub fn render(r: &AdviceReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "advise {} on {} ({})", r.path, r.server, r.app);
    if let Some(p) = &r.placement {
        let _ = writeln!(
            out,
            "  0. where does the view run? {}",
            p.place.map_or("cannot judge", |w| w.describe())
        );
        if !p.headline.is_empty() {
            let _ = writeln!(out, "     {}", p.headline);
        }
        let _ = writeln!(out, "     {}", p.reason);
    }
    let q1 = &r.question1;
    let _ = writeln!(
        out,
        "  1. does the work release the GIL? {}",
        q1.work.map_or("cannot judge", |w| w.describe())
    );
    let _ = writeln!(out, "     by {}", q1.source);
    if !q1.headline.is_empty() {
        let _ = writeln!(out, "     {}", q1.headline);
    }
    if let Some(p) = &q1.pair {
        if let Some(c) = p.capacity {
            let _ = writeln!(
                out,
                "     no-server control {c:.2}x ({})",
                if c <= 1.3 {
                    "a free core"
                } else {
                    "no free core: the wall ratio is not usable"
                }
            );
        }
    }
    let _ = writeln!(out, "     {}", q1.reason);
    let q2 = &r.question2;
    match &q2.figures {
        Some(f) => {
            let _ = writeln!(
                out,
                "  2. is there headroom? one request asks for {:.2} of {} cores ({:.0}% CPU + {:.0}% run-queue at one thread)",
                f.one_thread_demand(),
                f.cores,
                f.one_thread_cpu_pct,
                f.one_thread_run_queue_pct
            );
            let mut grid = crate::text::table::Grid::new([
                "threads",
                "req/s",
                "scaling",
                "cpu %",
                "rq %",
                "window",
                "warm-up (threads reached)",
            ]);
            for p in &f.points {
                let pct = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{v:.0}"));
                grid.row([
                    p.threads.to_string(),
                    format!("{:.1}", p.requests_per_s),
                    format!("{:.2}x", p.scaling),
                    pct(p.cpu_pct),
                    pct(p.run_queue_pct),
                    format!("{:.1}s", p.window_s),
                    match (p.warmup_s, p.threads_reached) {
                        (Some(w), Some(t)) => format!("{w:.1}s ({t})"),
                        _ => "-".into(),
                    },
                ]);
            }
            out.push_str(&grid.right(&[0, 1, 2, 3, 4, 5]).render("     "));
        }
        None => {
            let _ = writeln!(out, "  2. is there headroom? cannot judge: {}", q2.reason);
        }
    }
    match &r.recommendation {
        Some(line) => {
            let _ = writeln!(out, "ADVICE {line}");
        }
        None => {
            let _ = writeln!(out, "NO ADVICE (cannot judge)");
        }
    }
    let _ = writeln!(out, "  {}", r.reason);
    let _ = writeln!(out, "  {:.1} s", r.elapsed_s);
    out
}
