//! `hurray-inspect`: print a Hurray file's header, KV metadata and tensors,
//! and optionally validate it. A thin layer over `hurray-reader`: every fact
//! and every check comes from the library.
#![forbid(unsafe_code)]

mod cli;
mod human;
mod input;
mod json;
mod model;

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use hurray_reader::Options;

use crate::cli::Cli;
use crate::input::Source;
use crate::model::Report;

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Exit 0 when the file is readable (and valid, with `--validate`); an
/// `Err` (exit 1) names the file and the first problem. Usage errors exit 2
/// from `Cli::parse`.
fn run() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    let name = cli.display_name();
    let options = if cli.permissive {
        Options::permissive()
    } else {
        Options::strict()
    };
    let source = Source::open(cli.input(), options).map_err(|e| file_error(&name, e))?;
    let file = source.file().map_err(|e| file_error(&name, e))?;
    let report = Report::build(&file, cli.validate);

    let mut out = BufWriter::new(io::stdout().lock());
    let written = if cli.json {
        json::render(&report, &mut out)
    } else {
        human::render(&report, &name, &mut out)
    };
    match written.and_then(|()| out.flush()) {
        // A closed pipe (`| head`) is not an error of the file.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
        other => other.context("cannot write to standard output")?,
    }

    match report.first_error() {
        Some(e) => Err(file_error(&name, e.clone())),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// `FILE: <library error>`. I/O errors already name the path.
fn file_error(name: &str, e: hurray_reader::Error) -> anyhow::Error {
    match e {
        hurray_reader::Error::Io { .. } => anyhow::Error::new(e),
        e => anyhow::Error::new(e).context(name.to_owned()),
    }
}
