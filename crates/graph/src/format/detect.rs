//! Format detection from the first data lines.

use super::lex::{data_lines, parse_u64};
use super::Format;
use crate::error::{ErrorKind, InputError};

/// How many data lines [`detect_format`] looks at.
const PROBE_LINES: usize = 16;

/// Guesses the format from the first non-empty, non-comment lines:
/// a `t` record means [`Format::Graph`]; `v`, `e`, `-v` or `-e` records
/// without a `t` header mean [`Format::Csm`]; lines that are all numeric
/// pairs mean [`Format::Snap`]. Anything else, or no data line at all, is
/// [`ErrorKind::UnknownFormat`] (a CLI flag can then name the format); the
/// error's source is `<input>` ([`super::read_graph`] names the real one).
pub fn detect_format(content: &str) -> Result<Format, InputError> {
    detect_named(content, "<input>")
}

/// [`detect_format`] with errors naming `source_name`.
pub(crate) fn detect_named(content: &str, source_name: &str) -> Result<Format, InputError> {
    let mut saw_pair = false;
    for (line, text) in data_lines(content).take(PROBE_LINES) {
        let mut toks = text.split_ascii_whitespace();
        let first = toks.next().unwrap_or("");
        let unknown = |why: String| InputError::new(source_name, line, ErrorKind::UnknownFormat(why));
        match first {
            "t" if !saw_pair => return Ok(Format::Graph),
            "v" | "e" | "-v" | "-e" if !saw_pair => return Ok(Format::Csm),
            _ => {
                let numeric = parse_u64(first).is_some();
                let n = 1 + toks.clone().count();
                if numeric && n == 2 && toks.all(|t| parse_u64(t).is_some()) {
                    saw_pair = true;
                } else if saw_pair {
                    return Err(unknown(format!(
                        "line {line} is not a numeric `u v` pair like the lines before it"
                    )));
                } else {
                    return Err(unknown(format!(
                        "line {line} starts with `{first}`; expected a `t`, `v`, `e`, `-v` or `-e` record or a numeric `u v` pair"
                    )));
                }
            }
        }
    }
    if saw_pair {
        Ok(Format::Snap)
    } else {
        Err(InputError::new(
            source_name,
            0,
            ErrorKind::UnknownFormat("no data lines".into()),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(c: &str) -> Result<Format, ErrorKind> {
        detect_format(c).map_err(|e| e.kind)
    }

    #[test]
    fn detects_each_format() {
        assert_eq!(d("# x\nt 3 2\nv 0 0 1\n"), Ok(Format::Graph));
        assert_eq!(d("v 0 1\nv 1 1\ne 0 1 0\n"), Ok(Format::Csm));
        assert_eq!(d("\n-e 0 1 0\ne 1 2\n"), Ok(Format::Csm));
        assert_eq!(d("-v 3\n"), Ok(Format::Csm));
        assert_eq!(d("# FromNodeId\tToNodeId\n0\t1\n1 2\n"), Ok(Format::Snap));
        assert_eq!(d("% konect\n0 1\n"), Ok(Format::Snap));
    }

    #[test]
    fn rejects_unknown() {
        assert!(matches!(d(""), Err(ErrorKind::UnknownFormat(_))));
        assert!(matches!(d("# only\n"), Err(ErrorKind::UnknownFormat(_))));
        assert!(matches!(d("hello world\n"), Err(ErrorKind::UnknownFormat(_))));
        assert!(matches!(d("1 2 3\n"), Err(ErrorKind::UnknownFormat(_))));
        let e = detect_format("1 2\n3 4\nv 1 2\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(matches!(e.kind, ErrorKind::UnknownFormat(_)));
    }
}
