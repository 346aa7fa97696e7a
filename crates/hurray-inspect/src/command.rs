//! Runs a command: opens the file, gathers the command's report
//! (`crate::report`), and writes it as text (`crate::text`) or JSON
//! (`crate::json`). A new command is a new arm of [`execute`].

use std::io::{self, BufWriter, Write};

use hurray_reader::Options;

use crate::cli::{Action, Cli};
use crate::exit_code::{ExitCode, UsageError};
use crate::input::{Reading, Source};
use crate::json;
use crate::output::Sink;
use crate::progress::Progress;
use crate::report::dump::Dump;
use crate::report::entries::{self, Axis};
use crate::report::failure::Failure;
use crate::report::lookup;
use crate::report::pick::{chosen, pick_tensor};
use crate::report::summary::Report;
use crate::report::tensor;
use crate::text;

/// Runs the command `cli` asks for, writing to standard output: returns
/// [`ExitCode::Success`] when the file is readable (and valid, with
/// `--validate`); an `Err` names the file and the first problem
/// ([`ExitCode::BadFile`]), or the usage problem (a [`UsageError`],
/// [`ExitCode::Usage`]). Usage errors clap catches exit 2 from `Cli::parse`.
///
/// With `--json`, an error of the file that comes before any output (the
/// file does not open; a data command's tensor does not resolve, or what
/// it reads breaks a rule) is also printed on stdout as one object, so a
/// script gets JSON whenever the file is at fault.
pub fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    let name = cli.display_name();
    let mut out = BufWriter::new(io::stdout().lock());
    let mut sink = Sink::new(&mut out, cli.json, cli.quiet);
    match execute(cli, &name, &mut sink) {
        Ok(()) => {
            sink.finish()?;
            Ok(ExitCode::Success)
        }
        Err(e) => {
            // The exit reports this error: failing to write it as JSON (a
            // closed stdout) must not replace it.
            if let Some(file_error) = e.downcast_ref::<hurray_reader::Error>() {
                let _ = sink.json_error(file_error);
            }
            let _ = sink.finish();
            Err(e)
        }
    }
}

/// Reads the file and writes what `cli` asks for to `sink`.
fn execute<W: Write>(cli: &Cli, name: &str, sink: &mut Sink<'_, W>) -> anyhow::Result<()> {
    let options = if cli.permissive {
        Options::permissive()
    } else {
        Options::strict()
    }
    .with_threads(cli.threads());
    let reading = Reading {
        map: !cli.no_mmap,
        stdin_limit: cli.stdin_limit,
    };
    let source = Source::open(cli.input(), options, reading).map_err(|e| file_error(name, e))?;
    let file = source.file().map_err(|e| file_error(name, e))?;
    let mut progress = Progress::stderr(cli.quiet);
    let fail = |f: Failure| match f {
        Failure::File(e) => file_error(name, e),
        Failure::Usage(message) => anyhow::Error::new(UsageError(format!("{name}: {message}"))),
        Failure::Internal(message) => anyhow::anyhow!("{name}: {message}"),
    };

    let verdict = match cli.action() {
        Action::Summary => {
            let report = Report::build(&file, cli.validate, &mut progress);
            sink.emit(
                |o| text::summary::render(&report, name, o),
                |o| json::summary::render(&report, o),
            )?;
            report.first_error().cloned()
        }
        Action::Tensor => {
            let tensor = pick_tensor(&file, cli.tensor.as_deref(), "--tensor").map_err(fail)?;
            let d = progress
                .run(tensor, |p| tensor::detail(&file, tensor, cli.validate, p))
                .map_err(fail)?;
            sink.emit(|o| text::tensor::render(&d, o), |o| json::tensor::render(&d, o))?;
            d.first_error().cloned()
        }
        Action::Head(n) => {
            let t = chosen(&file, cli.tensor.as_deref(), "--head").map_err(fail)?;
            let entries = entries::head(&file, &t, n).map_err(fail)?;
            sink.emit(
                |o| text::entries::render(&entries, o),
                |o| json::entries::render(&entries, o),
            )?;
            None
        }
        Action::Get(index) => {
            let t = chosen(&file, cli.tensor.as_deref(), "--get").map_err(fail)?;
            let lookup = lookup::get(&file, &t, &index).map_err(fail)?;
            sink.emit(
                |o| text::lookup::render(&lookup, o),
                |o| json::lookup::render(&lookup, o),
            )?;
            None
        }
        Action::Column(j) => {
            let t = chosen(&file, cli.tensor.as_deref(), "--column").map_err(fail)?;
            let entries = entries::slice(&t, Axis::Column, j).map_err(fail)?;
            sink.emit(
                |o| text::entries::render(&entries, o),
                |o| json::entries::render(&entries, o),
            )?;
            None
        }
        Action::Row(i) => {
            let t = chosen(&file, cli.tensor.as_deref(), "--row").map_err(fail)?;
            let entries = entries::slice(&t, Axis::Row, i).map_err(fail)?;
            sink.emit(
                |o| text::entries::render(&entries, o),
                |o| json::entries::render(&entries, o),
            )?;
            None
        }
        Action::Dump => {
            let t = chosen(&file, cli.tensor.as_deref(), "--dump").map_err(fail)?;
            let d = Dump::gather(&t);
            sink.emit(|o| text::dump::render(&d, o), |o| json::dump::render(&d, o))?;
            None
        }
    };
    match verdict {
        Some(e) => Err(file_error(name, e)),
        None => Ok(()),
    }
}

/// `FILE: <library error>`. I/O errors already name the path.
fn file_error(name: &str, e: hurray_reader::Error) -> anyhow::Error {
    match e {
        hurray_reader::Error::Io { .. } => anyhow::Error::new(e),
        e => anyhow::Error::new(e).context(name.to_owned()),
    }
}
