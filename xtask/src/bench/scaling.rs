//! W8 scaling charts: per checkpoint shape and query (list, count, plan),
//! the median time and the peak memory of each reader against the table's
//! active files, as lines over a logarithmic file axis.

use std::path::Path;

use plotters::prelude::*;

use super::report::stats;
use super::{Run, Storage};
use crate::fixtures::W8Shape;
use crate::readers::Reader;

/// One reader's points: (active files, median s, peak RSS MiB).
type Line = (Reader, Vec<(f64, f64, f64)>);

/// Writes `<out>/charts/<storage>-W8.<shape>-scaling[.count|.plan].svg`
/// for each shape whose listing ran at two sizes or more (the sizes whose
/// listing ran are the chart's points).
pub fn write_w8(out: &Path, storage: Storage, runs: &[Run]) -> Result<(), String> {
    for shape in W8Shape::ALL {
        // The listing's rows are the active files.
        let (sizes, files): (Vec<&str>, Vec<f64>) = W8Shape::tables()
            .into_iter()
            .filter(|(s, _)| *s == shape)
            .filter_map(|(_, size)| {
                runs.iter()
                    .find(|r| {
                        r.case == shape.case(size)
                            && r.status == "ok"
                            && r.storage == storage.name()
                    })
                    .map(|r| (size, r.rows as f64))
            })
            .unzip();
        if sizes.len() < 2 {
            continue;
        }
        for suffix in ["", ".count", ".plan"] {
            let lines: Vec<Line> = Reader::ALL
                .iter()
                .filter_map(|&reader| {
                    let points: Option<Vec<(f64, f64, f64)>> = sizes
                        .iter()
                        .zip(&files)
                        .map(|(size, &n)| {
                            let case = format!("{}{suffix}", shape.case(size));
                            stats(runs, storage, &case, reader)
                                .ok()
                                .map(|s| (n, s.secs, s.rss))
                        })
                        .collect();
                    points.map(|p| (reader, p))
                })
                .collect();
            if lines.is_empty() {
                continue;
            }
            let name = format!("{}-scaling{suffix}", shape.label());
            let path = out
                .join("charts")
                .join(format!("{}-{name}.svg", storage.name()));
            let title = format!("{name} on {}: against active files", storage.name());
            draw(&path, &title, &lines).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

fn draw(path: &Path, title: &str, lines: &[Line]) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (960, 400)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 20))?;
    let (left, right) = root.split_horizontally(480);
    panel(&left, "time (s, median)", lines, |p| p.1)?;
    panel(&right, "peak RSS (MiB)", lines, |p| p.2)?;
    root.present()?;
    Ok(())
}

fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
    lines: &[Line],
    value: fn(&(f64, f64, f64)) -> f64,
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let points = || lines.iter().flat_map(|l| l.1.iter());
    let (lo, hi) = points().fold((f64::MAX, 0f64), |(lo, hi), p| (lo.min(p.0), hi.max(p.0)));
    let top = points().map(value).fold(0f64, f64::max).max(1e-6) * 1.15;
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 15))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d((lo * 0.7..hi * 1.4).log_scale(), 0f64..top)?;
    chart
        .configure_mesh()
        .x_desc("active files")
        .x_label_formatter(&|x| format!("{:.0}k", x / 1000.0))
        .draw()?;
    for (k, (reader, pts)) in lines.iter().enumerate() {
        let color = Palette99::pick(k).to_rgba();
        chart
            .draw_series(LineSeries::new(
                pts.iter().map(|p| (p.0, value(p))),
                color.stroke_width(2),
            ))?
            .label(reader.name())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart.draw_series(
            pts.iter()
                .map(|p| Circle::new((p.0, value(p)), 3, color.filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}
