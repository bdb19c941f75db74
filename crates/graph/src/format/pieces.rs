//! Cutting a file's text into pieces at line ends, so that the readers can
//! parse them on rayon's pool, and reading the usual lines (blanks and
//! decimal fields) from their bytes.

use std::io;
use std::path::Path;

/// Record text shorter than this is read sequentially.
pub(crate) const MIN_BYTES: usize = 4 << 20;

/// Into how many pieces a reader cuts its text (tests ask for many pieces
/// of small texts).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cut {
    pub pieces: usize,
}

impl Cut {
    /// Four pieces per pool thread, of at least 1 MiB each.
    pub fn for_pool(len: usize) -> Self {
        let pieces = (4 * rayon::current_num_threads()).min(len >> 20).max(1);
        Cut { pieces }
    }
}

/// The file at `path` as text. A regular file of 4 MiB or more is
/// read in pieces on rayon's pool (positioned reads into one buffer: the
/// copies out of the page cache and the buffer's page faults are spread
/// over the threads); anything else, or a piece that fails (the file
/// shrank meanwhile), is read by `std::fs::read_to_string`. Not UTF-8:
/// [`io::ErrorKind::InvalidData`], as `read_to_string` says.
pub fn read_text(path: &Path) -> io::Result<String> {
    #[cfg(unix)]
    {
        use rayon::prelude::*;
        use std::os::unix::fs::FileExt;
        let file = std::fs::File::open(path)?;
        let meta = file.metadata()?;
        let len = usize::try_from(meta.len()).unwrap_or(0);
        if meta.is_file() && len >= MIN_BYTES {
            let mut buf = vec![0u8; len];
            let per = len.div_ceil(Cut::for_pool(len).pieces);
            let read = buf
                .par_chunks_mut(per)
                .enumerate()
                .try_for_each(|(i, piece)| file.read_exact_at(piece, (i * per) as u64));
            if read.is_ok() {
                return String::from_utf8(buf)
                    .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "stream did not contain valid UTF-8"));
            }
        }
    }
    std::fs::read_to_string(path)
}

/// Whether a reader parses its records on rayon's pool.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Pool {
    /// When the records take [`MIN_BYTES`] or more.
    Auto,
    /// Never (tests: the sequential reader, as the reference).
    #[cfg(test)]
    Never,
    /// Always, cut as given.
    #[cfg(test)]
    Always(Cut),
}

impl Pool {
    /// How to cut records of `len` bytes, or `None` to read them
    /// sequentially.
    pub fn cut(self, len: usize) -> Option<Cut> {
        match self {
            Pool::Auto => (len >= MIN_BYTES).then(|| Cut::for_pool(len)),
            #[cfg(test)]
            Pool::Never => None,
            #[cfg(test)]
            Pool::Always(cut) => Some(cut),
        }
    }
}

/// `text` in up to `pieces` pieces of about equal size, each ending just
/// after a `\n` (the last one at the end of `text`).
pub(crate) fn cut_at_line_ends(text: &[u8], pieces: usize) -> Vec<&[u8]> {
    let pieces = pieces.max(1);
    let mut out = Vec::with_capacity(pieces);
    let mut start = 0;
    for i in 1..pieces {
        let aim = (text.len() / pieces * i).max(start);
        match memchr::memchr(b'\n', &text[aim..]) {
            Some(p) => {
                out.push(&text[start..aim + p + 1]);
                start = aim + p + 1;
            }
            None => break,
        }
    }
    out.push(&text[start..]);
    out
}

/// Number of `\n` in `b`: byte-wide sums over blocks of 255 bytes, which
/// the compiler turns into vector adds.
pub(crate) fn line_ends(b: &[u8]) -> usize {
    let block = |c: &[u8]| c.iter().fold(0u8, |n, &x| n + u8::from(x == b'\n')) as usize;
    let blocks = b.chunks_exact(255);
    let tail = block(blocks.remainder());
    blocks.map(block).sum::<usize>() + tail
}

/// Number of lines of `b`, the last one counted only if it is not empty.
pub(crate) fn line_slots(b: &[u8]) -> usize {
    line_ends(b) + usize::from(b.last().is_some_and(|&c| c != b'\n'))
}

/// Space or tab: what separates the fields of the usual line.
pub(crate) fn is_blank(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

/// The first index at or after `i` that is not a blank.
pub(crate) fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_blank(b[i]) {
        i += 1;
    }
    i
}

/// The end of `b`'s line from `i` on if only blanks and an optional `\r`
/// are left on it: the index of its `\n` (or `b.len()`).
fn line_end(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i) {
        None | Some(b'\n') => Some(i),
        Some(b'\r') if matches!(b.get(i + 1), None | Some(b'\n')) => Some(i + 1),
        _ => None,
    }
}

/// Reads decimal fields from `b[i..]` to the end of its line into `vals`:
/// each field of 1-19 digits, preceded by blanks (at least one unless
/// `i` is already at the first field), the line ending in blanks and an
/// optional `\r`. Returns the number of fields and the line's end (its
/// `\n` or `b.len()`), or `None` for any other shape or too many fields.
/// Such a line splits into the same fields under `str::trim` and
/// `split_ascii_whitespace`.
pub(crate) fn decimal_fields(b: &[u8], mut i: usize, at_field: bool, vals: &mut [u64]) -> Option<(usize, usize)> {
    let mut n = 0;
    let mut need_blank = !at_field;
    loop {
        let j = skip_blanks(b, i);
        if let Some(end) = line_end(b, j) {
            return Some((n, end));
        }
        if (need_blank && j == i) || n == vals.len() {
            return None;
        }
        let (mut x, mut d) = (0u64, j);
        while d < b.len() && b[d].is_ascii_digit() {
            if d - j == 19 {
                return None;
            }
            x = x * 10 + u64::from(b[d] - b'0');
            d += 1;
        }
        if d == j {
            return None;
        }
        vals[n] = x;
        n += 1;
        i = d;
        need_blank = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_end_at_line_ends_and_cover_the_text() {
        let text = b"ab\ncd\n\nefgh\nij";
        for pieces in 1..8 {
            let cut = cut_at_line_ends(text, pieces);
            assert_eq!(cut.concat(), text.to_vec());
            assert!(cut[..cut.len() - 1].iter().all(|p| p.last() == Some(&b'\n')));
        }
        let long: Vec<u8> = (0..1000).map(|i| if i % 7 == 0 { b'\n' } else { b'x' }).collect();
        assert_eq!(line_ends(&long), long.iter().filter(|&&c| c == b'\n').count());
        assert_eq!((line_slots(b"a\nb"), line_slots(b"a\nb\n"), line_slots(b"")), (2, 2, 0));
    }

    #[test]
    fn large_files_read_on_the_pool_as_read_to_string_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (0..MIN_BYTES / 6).map(|i| format!("e {} ü\n", i % 997)).collect();
        assert!(text.len() > MIN_BYTES);
        let path = dir.path().join("big.txt");
        std::fs::write(&path, &text).unwrap();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        assert_eq!(pool.install(|| read_text(&path)).unwrap(), text);
        // not UTF-8, in a later piece
        let mut bytes = text.into_bytes();
        let at = bytes.len() - 10;
        bytes[at] = 0xff;
        std::fs::write(&path, &bytes).unwrap();
        let err = pool.install(|| read_text(&path)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        // small files and missing ones as before
        std::fs::write(&path, "v 1 2\n").unwrap();
        assert_eq!(read_text(&path).unwrap(), "v 1 2\n");
        assert_eq!(
            read_text(&dir.path().join("none")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
    }

    #[test]
    fn fields_are_read_to_the_line_end() {
        let mut v = [0u64; 3];
        assert_eq!(decimal_fields(b"12 \t34 \r\nx", 0, true, &mut v), Some((2, 8)));
        assert_eq!(v[..2], [12, 34]);
        assert_eq!(decimal_fields(b" 1 2 3 4", 0, false, &mut v), None);
        assert_eq!(decimal_fields(b"v1 2", 1, false, &mut v), None);
        assert_eq!(decimal_fields(b"1 2x", 0, true, &mut v), None);
        assert_eq!(decimal_fields(b"1 2\r3", 0, true, &mut v), None);
        assert_eq!(decimal_fields(b"9999999999999999999", 0, true, &mut v), Some((1, 19)));
        assert_eq!(decimal_fields(b"10000000000000000000", 0, true, &mut v), None);
    }
}
