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
use csm_baselines::listing::{Listed, Sink};
use csm_graph::ids::IdMap;
use csm_planner::Sign;

use crate::input::output_name;

/// A listing being written (shared with the engine's sink).
#[derive(Clone)]
pub struct ListFile {
    inner: Arc<Mutex<Inner>>,
}

struct Inner {
    out: BufWriter<Box<dyn Write + Send>>,
    /// The files' ids, when the run renumbered its vertices.
    ids: Option<IdMap>,
    /// The first write error (later writes are dropped).
    error: Option<io::Error>,
    lines: u64,
    name: String,
}

impl Inner {
    fn write(&mut self, l: Listed<'_>, with_batch: bool) {
        if self.error.is_some() {
            return;
        }
        let r = self.write_line(l, with_batch);
        match r {
            Ok(()) => self.lines += 1,
            Err(e) => self.error = Some(e),
        }
    }

    fn write_line(&mut self, l: Listed<'_>, with_batch: bool) -> io::Result<()> {
        if with_batch {
            let sign = match l.sign {
                Sign::Positive => '+',
                Sign::Negative => '-',
            };
            write!(self.out, "{} {sign}", l.batch)?;
        }
        for (i, &v) in l.embedding.iter().enumerate() {
            let v = self.ids.as_ref().map_or(v, |m| m.original(v));
            if i > 0 || with_batch {
                self.out.write_all(b" ")?;
            }
            write!(self.out, "{v}")?;
        }
        self.out.write_all(b"\n")
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
                ids,
                error: None,
                lines: 0,
                name,
            })),
        })
    }

    /// Writes one embedding (with its batch and sign for a stream).
    pub fn write(&self, l: Listed<'_>, with_batch: bool) {
        // (a panicked writer poisons nothing worth keeping: write on)
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.write(l, with_batch);
    }

    /// A [`ListingEngine`](csm_baselines::listing::ListingEngine) sink
    /// writing each embedding with its batch and sign.
    pub fn stream_sink(&self) -> Sink {
        let me = self.clone();
        Box::new(move |l| me.write(l, true))
    }

    /// Flushes the file: the embeddings written, or the first write error.
    pub fn finish(&self) -> Result<u64> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
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
