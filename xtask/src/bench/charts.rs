//! SVG charts: per storage and case, the median time and the peak memory
//! of each reader as bars, the floors as dashed lines.

use std::collections::BTreeMap;
use std::path::Path;

use plotters::prelude::*;

use super::report::stats;
use super::{Floors, Run, Storage};
use crate::readers::Reader;
use crate::workload::Case;

/// Writes `<out>/charts/<storage>-<case>.svg` for every case that ran.
pub fn write_all(
    out: &Path,
    storages: &[Storage],
    cases: &[Case],
    runs: &[Run],
    floors: &BTreeMap<(Storage, String), Floors>,
) -> Result<(), String> {
    let dir = out.join("charts");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    for &storage in storages {
        for case in cases {
            let bars: Vec<(Reader, f64, f64)> = Reader::ALL
                .iter()
                .filter_map(|&r| {
                    stats(runs, storage, &case.id, r)
                        .ok()
                        .map(|s| (r, s.secs, s.rss))
                })
                .collect();
            if bars.is_empty() {
                continue;
            }
            let floor = floors
                .get(&(storage, case.id.clone()))
                .cloned()
                .unwrap_or_default();
            let mut lines = Vec::new();
            if let Some(f) = floor.arrow_rs_secs {
                lines.push(("arrow-rs floor", f));
            }
            if let Some(n) = floor.network {
                lines.push(("network floor", n.secs));
            }
            let path = dir.join(format!(
                "{}-{}.svg",
                storage.name(),
                case.id.replace('/', "-")
            ));
            draw(
                &path,
                &format!("{} on {}", case.id, storage.name()),
                &bars,
                &lines,
            )
            .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        super::scaling::write_w8(out, storage, runs)?;
    }
    Ok(())
}

fn draw(
    path: &Path,
    title: &str,
    bars: &[(Reader, f64, f64)],
    lines: &[(&str, f64)],
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (960, 400)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 20))?;
    let (left, right) = root.split_horizontally(480);
    let names: Vec<&str> = bars.iter().map(|b| b.0.name()).collect();
    panel(
        &left,
        "time (s, median)",
        &names,
        &bars.iter().map(|b| (b.0, b.1)).collect::<Vec<_>>(),
        lines,
    )?;
    panel(
        &right,
        "peak RSS (MiB)",
        &names,
        &bars.iter().map(|b| (b.0, b.2)).collect::<Vec<_>>(),
        &[],
    )?;
    root.present()?;
    Ok(())
}

fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
    names: &[&str],
    values: &[(Reader, f64)],
    lines: &[(&str, f64)],
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let top = values
        .iter()
        .map(|v| v.1)
        .chain(lines.iter().map(|l| l.1))
        .fold(0.0f64, f64::max)
        .max(1e-6)
        * 1.15;
    let n = values.len();
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 15))
        .margin(10)
        .x_label_area_size(60)
        .y_label_area_size(55)
        .build_cartesian_2d(0f64..n as f64, 0f64..top)?;
    let labels: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n * 2 + 1)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            if (x - x.floor() - 0.5).abs() < 0.01 && i < labels.len() {
                labels[i].clone()
            } else {
                String::new()
            }
        })
        .draw()?;
    chart.draw_series(values.iter().enumerate().map(|(i, (reader, v))| {
        let color = if reader.is_dar() {
            RGBColor(31, 119, 180)
        } else if reader.is_floor() {
            RGBColor(150, 150, 150)
        } else {
            RGBColor(255, 127, 14)
        };
        Rectangle::new(
            [(i as f64 + 0.15, 0.0), (i as f64 + 0.85, *v)],
            color.filled(),
        )
    }))?;
    for (k, (name, y)) in lines.iter().enumerate() {
        let color = if k == 0 { BLACK } else { RED };
        chart
            .draw_series(DashedLineSeries::new(
                vec![(0.0, *y), (n as f64, *y)],
                6,
                4,
                color.stroke_width(2),
            ))?
            .label(*name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    if !lines.is_empty() {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
    }
    Ok(())
}
