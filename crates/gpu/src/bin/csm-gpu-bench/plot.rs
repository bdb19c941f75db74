//! `bench.svg`: median batch time against batch size, one panel per query,
//! one line per engine (both axes logarithmic), from the bench's rows or
//! from a `bench.csv` it wrote (`--plot-from`, e.g. a device run's CSV
//! plotted on another machine).

use std::collections::BTreeMap;
use std::path::Path;

use plotters::prelude::*;

/// One point: (batch size, query, engine) and the median seconds of its
/// successful batches.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub size: usize,
    pub query: String,
    pub engine: String,
    pub seconds: f64,
}

/// One batch of one engine: (batch size, query, engine, seconds, ok).
pub type Sample = (usize, String, String, f64, bool);

/// The medians of samples, keeping only successful ones; points in the
/// order their (query, engine) first appear.
pub fn medians(samples: impl IntoIterator<Item = Sample>) -> Vec<Point> {
    let mut order: Vec<(String, String)> = Vec::new();
    let mut by: BTreeMap<(String, String, usize), Vec<f64>> = BTreeMap::new();
    for (size, query, engine, seconds, ok) in samples {
        if !ok || !seconds.is_finite() {
            continue;
        }
        let qe = (query.clone(), engine.clone());
        if !order.contains(&qe) {
            order.push(qe);
        }
        by.entry((query, engine, size)).or_default().push(seconds);
    }
    let mut out = Vec::new();
    for (q, e) in order {
        for ((_, _, size), v) in by.range((q.clone(), e.clone(), 0)..=(q.clone(), e.clone(), usize::MAX)) {
            out.push(Point {
                size: *size,
                query: q.clone(),
                engine: e.clone(),
                seconds: super::median(v.clone()),
            });
        }
    }
    out
}

/// The samples of a `bench.csv` (its header names the columns; the
/// `error` column, quoted, comes last).
pub fn samples_from_csv(text: &str) -> Result<Vec<Sample>, String> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().ok_or("an empty CSV")?.split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or_else(|| format!("the CSV has no `{name}` column"))
    };
    let (size, query, engine, seconds, ok) = (col("size")?, col("query")?, col("engine")?, col("seconds")?, col("ok")?);
    let mut out = Vec::new();
    for (i, line) in lines.enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        // the last column (error) may hold commas: split off the others
        let f: Vec<&str> = line.splitn(header.len(), ',').collect();
        let bad = |what: &str| format!("line {}: {what}", i + 2);
        if f.len() < header.len() {
            return Err(bad("too few columns"));
        }
        out.push((
            f[size].parse().map_err(|_| bad("bad size"))?,
            f[query].to_string(),
            f[engine].to_string(),
            f[seconds].parse().map_err(|_| bad("bad seconds"))?,
            f[ok] == "true",
        ));
    }
    Ok(out)
}

/// Draws `points` into an SVG at `path`.
pub fn write_svg(path: &Path, points: &[Point], title: &str) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: cannot draw the plot: {e}", path.display());
    let mut queries: Vec<&str> = Vec::new();
    let mut engines: Vec<&str> = Vec::new();
    for p in points {
        if !queries.contains(&p.query.as_str()) {
            queries.push(&p.query);
        }
        if !engines.contains(&p.engine.as_str()) {
            engines.push(&p.engine);
        }
    }
    if points.is_empty() {
        return Err(err(&"no successful batch to plot"));
    }
    let (xmin, xmax) = bounds(points.iter().map(|p| p.size as f64));
    let (ymin, ymax) = bounds(points.iter().map(|p| p.seconds * 1e3));
    let mut keys: Vec<f64> = points.iter().map(|p| p.size as f64).collect();
    keys.sort_by(f64::total_cmp);
    keys.dedup();
    let cols = queries.len().clamp(1, 3);
    let rows = queries.len().div_ceil(cols);
    let root = SVGBackend::new(path, (420 * cols as u32, 60 + 340 * rows as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let root = root.titled(title, ("sans-serif", 20)).map_err(|e| err(&e))?;
    let panels = root.split_evenly((rows, cols));
    for (qi, (query, area)) in queries.iter().zip(panels.iter()).enumerate() {
        let mut chart = ChartBuilder::on(area)
            .caption(*query, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d(
                (xmin..xmax).log_scale().with_key_points(keys.clone()),
                (ymin..ymax).log_scale(),
            )
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("batch size (updates)")
            .y_desc("median ms per batch")
            .x_label_formatter(&|x| format!("{}", x.round() as u64))
            .y_label_formatter(&|y| axis_ms(*y))
            .draw()
            .map_err(|e| err(&e))?;
        for (ei, engine) in engines.iter().enumerate() {
            let pts: Vec<(f64, f64)> = points
                .iter()
                .filter(|p| p.query == *query && p.engine == *engine)
                .map(|p| (p.size as f64, p.seconds * 1e3))
                .collect();
            // the first panel labels every engine, even one it lacks
            if pts.is_empty() && qi != 0 {
                continue;
            }
            let color = Palette99::pick(ei).to_rgba();
            let series = chart
                .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
                .map_err(|e| err(&e))?;
            if qi == 0 {
                series
                    .label(*engine)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
            }
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(|e| err(&e))?;
        }
        if qi == 0 {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(|e| err(&e))?;
        }
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// A millisecond tick: whole numbers from 1, else two significant digits.
fn axis_ms(y: f64) -> String {
    if y >= 1.0 {
        format!("{y:.0}")
    } else {
        let digits = (1.0 - y.log10().floor()).max(1.0) as usize;
        format!("{y:.digits$}")
    }
}

/// A logarithmic axis' range around positive values.
fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| *v > 0.0 && v.is_finite())
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if !lo.is_finite() {
        return (0.1, 10.0);
    }
    if lo == hi {
        (lo / 2.0, hi * 2.0)
    } else {
        (lo / 1.3, hi * 1.3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_skip_failures_and_keep_first_appearance_order() {
        let s = |size, q: &str, e: &str, x, ok| (size, q.to_string(), e.to_string(), x, ok);
        let pts = medians([
            s(64, "house", "zp", 3.0, true),
            s(64, "house", "zp", 1.0, true),
            s(64, "house", "zp", 2.0, true),
            s(64, "house", "cpu", 9.0, false),
            s(64, "house", "cpu", 5.0, true),
            s(8, "house", "zp", 7.0, true),
            s(64, "prism", "zp", f64::NAN, true),
        ]);
        let got: Vec<(usize, &str, &str, f64)> = pts
            .iter()
            .map(|p| (p.size, p.query.as_str(), p.engine.as_str(), p.seconds))
            .collect();
        assert_eq!(
            got,
            [
                (8, "house", "zp", 7.0),
                (64, "house", "zp", 2.0),
                (64, "house", "cpu", 5.0)
            ]
        );
    }

    #[test]
    fn csv_samples_read_back_with_commas_in_errors() {
        let text = "size,batch,query,engine,seconds,ok,error\n\
                    64,0,house,zp,0.001,true,\"\"\n\
                    64,1,house,zp,0.002,false,\"timed out, over 6 s\"\n";
        let got = samples_from_csv(text).expect("reads");
        assert_eq!(got.len(), 2);
        assert_eq!(got[1], (64, "house".to_string(), "zp".to_string(), 0.002, false));
        assert!(samples_from_csv("size,query\n64,house\n")
            .unwrap_err()
            .contains("engine"));
        assert!(
            samples_from_csv("size,batch,query,engine,seconds,ok,error\nx,0,q,e,1,true,\"\"\n")
                .unwrap_err()
                .contains("line 2")
        );
    }

    #[test]
    fn millisecond_ticks_read_well() {
        assert_eq!(axis_ms(1000.0), "1000");
        assert_eq!(axis_ms(1.0), "1");
        assert_eq!(axis_ms(0.5), "0.50");
        assert_eq!(axis_ms(0.01), "0.010");
    }

    #[test]
    fn an_svg_is_drawn_with_a_panel_per_query() {
        let dir = std::env::temp_dir().join(format!("csm-gpu-bench-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bench.svg");
        let p = |size, q: &str, e: &str, x| Point {
            size,
            query: q.to_string(),
            engine: e.to_string(),
            seconds: x,
        };
        let pts = [
            p(64, "house", "zp", 3e-4),
            p(1024, "house", "zp", 9e-4),
            p(64, "prism", "gcsm-persist", 2e-4),
        ];
        write_svg(&path, &pts, "test").expect("drawn");
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.contains("house") && svg.contains("prism") && svg.contains("gcsm-persist"));
        assert!(write_svg(&path, &[], "empty").is_err());
        let _ = std::fs::remove_dir_all(dir);
    }
}
