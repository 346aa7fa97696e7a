//! Standard output: a report as text or as JSON, nothing with `--quiet`,
//! the JSON error object when the file fails first, and a closed pipe
//! (`| head`) taken quietly.

use std::io::{self, Write};

use anyhow::Context;

use crate::json;

/// Standard output, in the form asked for (nothing with `--quiet`).
pub struct Sink<'a, W: Write> {
    out: &'a mut W,
    json: bool,
    quiet: bool,
    /// Whether anything has been written (or would have been, without `--quiet`).
    written: bool,
}

impl<'a, W: Write> Sink<'a, W> {
    /// Writes to `out`: JSON with `json`, nothing with `quiet`.
    pub fn new(out: &'a mut W, json: bool, quiet: bool) -> Self {
        Sink {
            out,
            json,
            quiet,
            written: false,
        }
    }

    /// Writes with `human` or `json`; a closed pipe (`| head`) ends the
    /// output quietly: it is not an error of the file.
    pub fn emit(
        &mut self,
        human: impl FnOnce(&mut W) -> io::Result<()>,
        json: impl FnOnce(&mut W) -> io::Result<()>,
    ) -> anyhow::Result<()> {
        self.written = true;
        if self.quiet {
            return Ok(());
        }
        let written = if self.json { json(self.out) } else { human(self.out) };
        tolerate_closed_pipe(written)
    }

    /// With `--json` and nothing written yet: `e` as the error object.
    pub fn json_error(&mut self, e: &hurray_reader::Error) -> io::Result<()> {
        if !self.json || self.quiet || self.written {
            return Ok(());
        }
        self.written = true;
        json::error::render(e, self.out)
    }

    pub fn finish(&mut self) -> anyhow::Result<()> {
        tolerate_closed_pipe(self.out.flush())
    }
}

fn tolerate_closed_pipe(result: io::Result<()>) -> anyhow::Result<()> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to standard output"),
    }
}
