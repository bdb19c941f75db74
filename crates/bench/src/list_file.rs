//! `--list FILE` of `csm stream` and `csm match`: the embeddings themselves
//! ([`csm_baselines::listing`]), one line each, in the files' vertex ids.
//!
//! Lines: `f(u0) f(u1) … f(uk-1)` for `csm match`, `BATCH SIGN f(u0) …` for
//! `csm stream` (`BATCH` as in the JSON lines' `"batch"`, `SIGN` `+` for an
//! embedding that appeared, `-` for one that vanished). A first line
//! starting with `#` says so.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context, Result};
use csm_baselines::listing::{Listed, Sink, SinkFactory};
use csm_graph::ids::IdMap;
use csm_planner::Sign;

use crate::input::output_name;

/// A listing being written (shared with the engine's sink).
#[derive(Clone)]
pub struct ListFile {
    inner: Arc<Mutex<Inner>>,
    /// The files' ids, when the run renumbered its vertices.
    ids: Arc<Option<IdMap>>,
}

struct Inner {
    out: BufWriter<Box<dyn Write + Send>>,
    /// The first write error (later writes are dropped).
    error: Option<io::Error>,
    lines: u64,
    name: String,
    /// The line being written ([`ListFile::write`]), kept for its buffer.
    line: Vec<u8>,
}

impl Inner {
    /// Writes `lines` formatted lines (`bytes`), or records the error.
    fn write(&mut self, bytes: &[u8], lines: u64) {
        if self.error.is_some() {
            return;
        }
        match self.out.write_all(bytes) {
            Ok(()) => self.lines += lines,
            Err(e) => self.error = Some(e),
        }
    }
}

/// Formats `l` as a line into `out`, in the files' ids `ids`.
fn format_line(out: &mut Vec<u8>, ids: Option<&IdMap>, l: Listed<'_>, with_batch: bool) {
    // (writing into a Vec cannot fail)
    if with_batch {
        let sign = match l.sign {
            Sign::Positive => '+',
            Sign::Negative => '-',
        };
        let _ = write!(out, "{} {sign}", l.batch);
    }
    for (i, &v) in l.embedding.iter().enumerate() {
        let v = ids.map_or(v, |m| m.original(v));
        if i > 0 || with_batch {
            out.push(b' ');
        }
        let _ = write!(out, "{v}");
    }
    out.push(b'\n');
}

/// Lines gathered for a [`ListFile`] by one thread, written in one piece
/// once they pass [`LineBuffer::FLUSH_BYTES`] and when dropped. The buffer
/// grows as lines come (a stream's batches make one per piece of work, most
/// of which hold a few lines).
pub struct LineBuffer {
    file: ListFile,
    buf: Vec<u8>,
    lines: u64,
    /// Lines start with the batch and sign (`csm stream`).
    with_batch: bool,
}

impl LineBuffer {
    pub const FLUSH_BYTES: usize = 1 << 20;

    /// Adds one embedding's line (with batch and sign for a stream's
    /// buffer).
    pub fn push(&mut self, l: Listed<'_>) {
        format_line(&mut self.buf, (*self.file.ids).as_ref(), l, self.with_batch);
        self.lines += 1;
        if self.buf.len() >= Self::FLUSH_BYTES {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.lines > 0 {
            self.file.lock().write(&self.buf, self.lines);
            self.buf.clear();
            self.lines = 0;
        }
    }
}

impl Drop for LineBuffer {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Refuses `--list` where it cannot work: to stdout beside `--json` (which
/// stdout carries), or with another `--engine` than `cpu` (the default) or
/// `list` (a listing runs the listing engine).
pub fn check_args(list: Option<&Path>, json: bool, engine: &str) -> Result<()> {
    let Some(path) = list else {
        return Ok(());
    };
    if path.as_os_str() == "-" && json {
        bail!("--list -: stdout carries the JSON output; list to a file");
    }
    if !["cpu", "list"].contains(&engine) {
        bail!("--list runs its own engine (`list`), not `{engine}`: drop --engine");
    }
    Ok(())
}

impl ListFile {
    /// Creates `path` (`-`: stdout) and writes `header` as its first line
    /// (after `# `). `ids`: the files' ids of a renumbered run.
    pub fn create(path: &Path, ids: Option<IdMap>, header: &str) -> Result<ListFile> {
        let name = output_name(path);
        let out: Box<dyn Write + Send> = if path.as_os_str() == "-" {
            Box::new(io::stdout())
        } else {
            Box::new(File::create(path).with_context(|| format!("{name}: cannot create"))?)
        };
        let mut out = BufWriter::with_capacity(1 << 16, out);
        writeln!(out, "# {header}").with_context(|| format!("{name}: cannot write"))?;
        Ok(ListFile {
            inner: Arc::new(Mutex::new(Inner {
                out,
                error: None,
                lines: 0,
                name,
                line: Vec::new(),
            })),
            ids: Arc::new(ids),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // (a panicked writer poisons nothing worth keeping: write on)
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes one embedding (with its batch and sign for a stream).
    pub fn write(&self, l: Listed<'_>, with_batch: bool) {
        let mut inner = self.lock();
        let mut line = std::mem::take(&mut inner.line);
        line.clear();
        format_line(&mut line, (*self.ids).as_ref(), l, with_batch);
        inner.write(&line, 1);
        inner.line = line;
    }

    /// A buffer of lines for one thread ([`LineBuffer`]), without batch
    /// and sign (`csm match`).
    pub fn buffer(&self) -> LineBuffer {
        self.line_buffer(false)
    }

    fn line_buffer(&self, with_batch: bool) -> LineBuffer {
        LineBuffer {
            file: self.clone(),
            buf: Vec::new(),
            lines: 0,
            with_batch,
        }
    }

    /// Sinks for a parallel [`ListingEngine`](csm_baselines::listing::ListingEngine):
    /// each a [`LineBuffer`] writing lines with batch and sign.
    pub fn stream_buffers(&self) -> SinkFactory {
        let me = self.clone();
        Arc::new(move || {
            let mut buf = me.line_buffer(true);
            Box::new(move |l| buf.push(l))
        })
    }

    /// A [`ListingEngine`](csm_baselines::listing::ListingEngine) sink
    /// writing each embedding with its batch and sign.
    pub fn stream_sink(&self) -> Sink {
        let me = self.clone();
        Box::new(move |l| me.write(l, true))
    }

    /// Flushes the file: the embeddings written, or the first write error.
    pub fn finish(&self) -> Result<u64> {
        let mut inner = self.lock();
        if inner.error.is_none() {
            if let Err(e) = inner.out.flush() {
                inner.error = Some(e);
            }
        }
        match inner.error.take() {
            Some(e) => Err(anyhow::Error::new(e).context(format!("{}: cannot write", inner.name))),
            None => Ok(inner.lines),
        }
    }
}
