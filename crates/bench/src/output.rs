//! Output helpers: aligned tables for people, JSON lines for scripts, and
//! progress bars (on stderr, only when it is a terminal and `--json` is off).

use std::io::IsTerminal;
use std::time::Duration;

use csm_planner::count;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Map, Value};

/// A progress bar over `len` steps, or a hidden one when `enabled` is false
/// or stderr is not a terminal.
pub fn progress_bar(len: u64, enabled: bool, unit: &str) -> ProgressBar {
    if !enabled || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    let template = format!(
        "{{spinner}} [{{elapsed_precise}}] {{wide_bar}} {{pos}}/{{len}} {unit} ({{per_sec}}, eta {{eta}}) {{msg}}"
    );
    if let Ok(style) = ProgressStyle::with_template(&template) {
        pb.set_style(style);
    }
    pb.enable_steady_tick(Duration::from_millis(200));
    pb
}

/// Prints one JSON value as a line on stdout.
pub fn json_line(v: &Value) {
    println!("{}", serde_json::to_string(v).unwrap_or_else(|_| "null".into()));
}

/// `x / secs`, or 0 when no time was measured (keeps JSON free of inf/NaN).
pub fn rate(x: f64, secs: f64) -> f64 {
    if secs > 0.0 && secs.is_finite() {
        x / secs
    } else {
        0.0
    }
}

/// Inserts `extra` into `obj`; a key that is already there is kept and the
/// engine's value goes to `extra.<key>`.
pub fn flatten_into(obj: &mut Map<String, Value>, extra: &Map<String, Value>) {
    for (k, v) in extra {
        if obj.contains_key(k) {
            obj.insert(format!("extra.{k}"), v.clone());
        } else {
            obj.insert(k.clone(), v.clone());
        }
    }
}

/// An embedding count for JSON: the number, or `null` when it saturated
/// (2^64 − 1 or more: [`csm_planner::count`]); the object that holds it
/// then says `"overflow": true` ([`mark_overflow`]).
pub fn count_json(n: u64) -> Value {
    if count::saturated(n) {
        Value::Null
    } else {
        Value::from(n)
    }
}

/// Sets `"overflow": true` in `obj` when any of `counts` saturated.
pub fn mark_overflow(obj: &mut Map<String, Value>, counts: &[u64]) {
    if counts.iter().any(|&n| count::saturated(n)) {
        obj.insert("overflow".into(), Value::Bool(true));
    }
}

/// An embedding count for people: grouped digits, or a note that it
/// overflowed 64 bits.
pub fn count_text(n: u64) -> String {
    if count::saturated(n) {
        format!("{} or more (overflows 64 bits)", group(n))
    } else {
        group(n)
    }
}

/// An integer with thin grouping: `1234567` → `1,234,567`.
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Seconds for people: `1.23 s`, `45.6 ms`, `789 µs`.
pub fn secs(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{:.0} µs", s * 1e6)
    }
}

/// A rate for people: `12.3k/s`.
pub fn per_sec(r: f64) -> String {
    if r >= 1e6 {
        format!("{:.2}M/s", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.1}k/s", r / 1e3)
    } else {
        format!("{r:.0}/s")
    }
}

/// A plain text table: the first column left-aligned, the others right-aligned.
#[derive(Debug, Clone, Default)]
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Table {
        Table {
            headers: headers.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    /// The table as text, one line per row, with a rule under the header.
    pub fn render(&self) -> String {
        let cols = self
            .headers
            .len()
            .max(self.rows.iter().map(Vec::len).max().unwrap_or(0));
        let mut width = vec![0usize; cols];
        for r in std::iter::once(&self.headers).chain(&self.rows) {
            for (i, c) in r.iter().enumerate() {
                width[i] = width[i].max(c.chars().count());
            }
        }
        let line = |r: &[String]| {
            let mut s = String::new();
            for (i, w) in width.iter().enumerate() {
                let c = r.get(i).map_or("", String::as_str);
                if i > 0 {
                    s.push_str("  ");
                }
                let pad = w - c.chars().count();
                if i == 0 {
                    s.push_str(c);
                    s.push_str(&" ".repeat(pad));
                } else {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(c);
                }
            }
            s.trim_end().to_string()
        };
        let mut out = line(&self.headers);
        out.push('\n');
        out.push_str(&"-".repeat(width.iter().sum::<usize>() + 2 * cols.saturating_sub(1)));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r));
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_digits() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(1234567), "1,234,567");
    }

    #[test]
    fn renders_aligned() {
        let mut t = Table::new(["q", "n"]);
        t.row(["triangle", "12"]);
        t.row(["x", "3456"]);
        assert_eq!(
            t.render(),
            "q            n\n--------------\ntriangle    12\nx         3456\n"
        );
    }

    #[test]
    fn flattens_with_prefix_on_clash() {
        let mut o = Map::new();
        o.insert("seconds".into(), 1.into());
        let mut e = Map::new();
        e.insert("seconds".into(), 2.into());
        e.insert("h2d".into(), 3.into());
        flatten_into(&mut o, &e);
        assert_eq!(o["seconds"], 1);
        assert_eq!(o["extra.seconds"], 2);
        assert_eq!(o["h2d"], 3);
    }
}
