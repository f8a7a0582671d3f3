//! `--svg PATH` (and next to `--markdown`): req/s and p99 against handler
//! threads, one line per route (and per worker count, when several are
//! swept), so the releasing and the holding mode share one chart.
//!
//! plotters' SVG backend writes text as `<text>` elements that the viewer
//! lays out, so no font file is read or bundled (the crate's `ttf` and
//! `ab_glyph` features are off). Threads are categories, evenly spaced, so
//! 1, 2, 4, 8 read as the doublings they are.

use std::collections::BTreeMap;

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;

use crate::sweep::{SettingResult, SweepResult};

const WIDTH: u32 = 1000;
const HEIGHT: u32 = 440;

/// One line: its name and (threads, value) points.
type Series = (String, Vec<(u32, f64)>);

fn series_name(r: &SettingResult, several_workers: bool) -> String {
    match (several_workers, r.setting.workers) {
        (true, Some(w)) => format!("{} workers={w}", r.setting.label),
        _ => r.setting.label.clone(),
    }
}

/// The plotted figure of each measured setting that has a thread count.
fn series(result: &SweepResult, figure: impl Fn(&SettingResult) -> Option<f64>) -> Vec<Series> {
    let mut workers: Vec<Option<u32>> = result.settings.iter().map(|s| s.setting.workers).collect();
    workers.sort();
    workers.dedup();
    let several = workers.len() > 1;
    let mut lines: BTreeMap<(usize, String), Vec<(u32, f64)>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for r in &result.settings {
        let (Some(t), Some(y)) = (r.setting.threads, figure(r)) else {
            continue;
        };
        let name = series_name(r, several);
        let pos = order.iter().position(|n| *n == name).unwrap_or_else(|| {
            order.push(name.clone());
            order.len() - 1
        });
        lines.entry((pos, name)).or_default().push((t, y));
    }
    lines
        .into_iter()
        .map(|((_, name), mut pts)| {
            pts.sort_by_key(|p| p.0);
            (name, pts)
        })
        .collect()
}

fn panel(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    title: &str,
    threads: &[u32],
    lines: &[Series],
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<_>| e.to_string();
    let top = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|x| x.1))
        .fold(0.0f64, f64::max);
    // Headroom above the highest point keeps the legend off the lines.
    let top = if top > 0.0 { top * 1.35 } else { 1.0 };
    let n = threads.len() as u32;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        // `a..b` segmented has a segment for each of a..=b: one per thread count.
        .build_cartesian_2d((0..n.saturating_sub(1)).into_segmented(), 0f64..top)
        .map_err(e)?;
    let label = |v: &SegmentValue<u32>| match v {
        SegmentValue::CenterOf(i) => threads
            .get(*i as usize)
            .map(|t| t.to_string())
            .unwrap_or_default(),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(WHITE)
        .x_desc("handler threads")
        .y_desc(title)
        .x_labels(threads.len())
        .x_label_formatter(&label)
        .draw()
        .map_err(e)?;
    let at =
        |t: u32| SegmentValue::CenterOf(threads.iter().position(|x| *x == t).unwrap_or(0) as u32);
    for (i, (name, pts)) in lines.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let coords: Vec<(SegmentValue<u32>, f64)> = pts.iter().map(|(t, y)| (at(*t), *y)).collect();
        chart
            .draw_series(LineSeries::new(coords.clone(), color.stroke_width(2)))
            .map_err(e)?
            .label(name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart
            .draw_series(
                coords
                    .into_iter()
                    .map(|c| Circle::new(c, 4, color.filled())),
            )
            .map_err(e)?;
    }
    if !lines.is_empty() {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(e)?;
    }
    Ok(())
}

/// The SVG document.
pub fn render(result: &SweepResult) -> Result<String, String> {
    let mut threads: Vec<u32> = result
        .settings
        .iter()
        .filter_map(|s| s.setting.threads)
        .collect();
    threads.sort_unstable();
    threads.dedup();
    let rps = series(result, |r| r.requests_per_s());
    let p99 = series(result, |r| r.load.as_ref()?.latency.map(|l| l.p99_ms));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let root = root
            .titled(
                &format!(
                    "{} on {}: {} connection(s)",
                    "sweep", result.server, result.connections
                ),
                ("sans-serif", 20),
            )
            .map_err(|e| e.to_string())?;
        if threads.is_empty() {
            root.draw(&Text::new(
                "no setting set handler threads: nothing to plot against threads",
                (20, 40),
                ("sans-serif", 16),
            ))
            .map_err(|e| e.to_string())?;
        } else {
            let (left, right) = root.split_horizontally(WIDTH / 2);
            panel(&left, "req/s", &threads, &rps)?;
            panel(&right, "p99 ms", &threads, &p99)?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}
