//! Shared line splitting, number parsing, error collection and a fast edge
//! set for the readers. No regex: lines are split on ASCII whitespace.

use super::ReadReport;
use crate::error::{ErrorKind, InputError};
use crate::types::{Label, VertexId, ABSENT, MAX_VERTEX_ID};
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// Most errors a [`ReadReport`] keeps.
pub const MAX_REPORTED_ERRORS: usize = 10;

/// Data lines of `content` as `(1-based line number, trimmed line)`;
/// empty lines and comments (`#` or `%` first) are skipped. Handles `\n` and
/// `\r\n`, and a leading UTF-8 byte-order mark (some Windows editors
/// write one).
pub(crate) fn data_lines(content: &str) -> impl Iterator<Item = (usize, &str)> {
    let content = content.strip_prefix('\u{feff}').unwrap_or(content);
    content
        .lines()
        .enumerate()
        .filter_map(|(i, l)| data_line(l).map(|l| (i + 1, l)))
}

/// `line` trimmed, or `None` when it is blank or a comment (`#`, `%`).
pub(crate) fn data_line(line: &str) -> Option<&str> {
    let l = line.trim();
    (!l.is_empty() && !l.starts_with(['#', '%'])).then_some(l)
}

/// Up to [`Fields::CAP`] whitespace-separated fields of one line.
pub(crate) struct Fields<'a> {
    f: [&'a str; Fields::CAP],
    /// Number of fields on the line (may exceed `CAP`; only `CAP` are kept).
    pub n: usize,
}

impl<'a> Fields<'a> {
    pub const CAP: usize = 6;

    pub fn split(line: &'a str) -> Self {
        let mut f = [""; Self::CAP];
        let mut n = 0;
        for tok in line.split_ascii_whitespace() {
            if n < Self::CAP {
                f[n] = tok;
            }
            n += 1;
        }
        Fields { f, n }
    }

    pub fn get(&self, i: usize) -> &'a str {
        self.f[i]
    }
}

pub(crate) fn malformed(msg: impl Into<String>) -> ErrorKind {
    ErrorKind::Malformed(msg.into())
}

/// Parses a non-negative decimal integer; `None` if `s` has a non-digit or
/// does not fit in 64 bits.
#[inline]
pub(crate) fn parse_u64(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.is_empty() || b.len() > 20 {
        return None;
    }
    let mut x: u64 = 0;
    for &c in b {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        x = x.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(x)
}

/// A vertex id field: a non-negative integer no larger than [`MAX_VERTEX_ID`].
#[inline]
pub(crate) fn parse_id(s: &str, what: &str) -> Result<VertexId, ErrorKind> {
    match parse_u64(s) {
        Some(x) if x <= u64::from(MAX_VERTEX_ID) => Ok(x as VertexId),
        Some(x) => Err(ErrorKind::VertexIdTooLarge(x)),
        None if !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()) => {
            Err(malformed(format!("{what} `{s}` does not fit in 64 bits")))
        }
        None => Err(malformed(format!("{what} `{s}` is not a non-negative integer"))),
    }
}

/// A label field: a non-negative integer below `u32::MAX` (which is reserved
/// for [`ABSENT`]).
#[inline]
pub(crate) fn parse_label(s: &str, what: &str) -> Result<Label, ErrorKind> {
    match parse_u64(s) {
        Some(x) if x < u64::from(ABSENT) => Ok(x as Label),
        Some(x) => Err(malformed(format!(
            "{what} {x} is too large (labels must be below {ABSENT})"
        ))),
        None => Err(malformed(format!("{what} `{s}` is not a non-negative integer"))),
    }
}

/// A count field (header sizes, degrees).
pub(crate) fn parse_count(s: &str, what: &str) -> Result<u64, ErrorKind> {
    parse_u64(s).ok_or_else(|| malformed(format!("{what} `{s}` is not a non-negative integer")))
}

/// Strict mode: the first error aborts. Lenient mode: the line is skipped,
/// counted, and the first [`MAX_REPORTED_ERRORS`] errors are kept.
pub(crate) struct Sink<'a> {
    pub source: &'a str,
    pub lenient: bool,
    pub report: ReadReport,
}

impl<'a> Sink<'a> {
    pub fn new(source: &'a str, lenient: bool) -> Self {
        Sink {
            source,
            lenient,
            report: ReadReport::default(),
        }
    }

    pub fn err(&self, line: usize, kind: ErrorKind) -> InputError {
        InputError::new(self.source, line, kind)
    }

    /// A bad line: an error when strict, else skipped and counted.
    pub fn skip(&mut self, line: usize, kind: ErrorKind) -> Result<(), InputError> {
        if !self.lenient {
            return Err(self.err(line, kind));
        }
        self.report.skipped += 1;
        self.note(line, kind);
        Ok(())
    }

    /// Records a tolerated problem without counting a skipped line.
    pub fn note(&mut self, line: usize, kind: ErrorKind) {
        if self.report.first_errors.len() < MAX_REPORTED_ERRORS {
            let e = self.err(line, kind);
            self.report.first_errors.push(e);
        }
    }
}

/// Multiplicative hasher for `u64` keys (the keys are already well spread
/// vertex pairs; SipHash would dominate parse time).
#[derive(Default, Clone, Copy)]
pub(crate) struct U64Hasher(u64);

impl Hasher for U64Hasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, x: u64) {
        let h = (x ^ (x >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        self.0 = h ^ (h >> 32);
    }
}

/// A set of undirected vertex pairs.
pub(crate) type PairSet = HashSet<u64, BuildHasherDefault<U64Hasher>>;

/// The key of the undirected pair `{u, v}`.
#[inline]
pub(crate) fn pair_key(u: VertexId, v: VertexId) -> u64 {
    let (a, b) = if u <= v { (u, v) } else { (v, u) };
    (u64::from(a) << 32) | u64::from(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(parse_u64("0"), Some(0));
        assert_eq!(parse_u64("18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64("18446744073709551616"), None);
        assert_eq!(parse_u64("-1"), None);
        assert_eq!(parse_u64("1x"), None);
        assert_eq!(parse_u64(""), None);
        assert_eq!(parse_id("2147483646", "id"), Ok(MAX_VERTEX_ID));
        assert_eq!(
            parse_id("2147483647", "id"),
            Err(ErrorKind::VertexIdTooLarge(2147483647))
        );
        assert!(matches!(
            parse_id("99999999999999999999999", "id"),
            Err(ErrorKind::Malformed(_))
        ));
        assert!(matches!(
            parse_label("4294967295", "label"),
            Err(ErrorKind::Malformed(_))
        ));
    }

    #[test]
    fn lines_and_fields() {
        let c = "# c\n\n v 1  2 \r\ne\t3 4\n% k\n";
        let v: Vec<_> = data_lines(c).collect();
        assert_eq!(v, vec![(3, "v 1  2"), (4, "e\t3 4")]);
        let bom: Vec<_> = data_lines("\u{feff}t 1 0\r\nv 0 0\n").collect();
        assert_eq!(bom, vec![(1, "t 1 0"), (2, "v 0 0")]);
        let f = Fields::split("a b c d e f g h");
        assert_eq!(f.n, 8);
        assert_eq!(f.get(5), "f");
    }
}
