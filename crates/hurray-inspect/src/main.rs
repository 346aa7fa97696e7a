//! `hurray-inspect`: print a Hurray file's header, KV metadata and tensors;
//! one tensor's descriptor byte by byte; its first entries, one element, one
//! column or row, or all of its arrays; and optionally validate it. A thin
//! layer over `hurray-reader`: every fact and every check comes from the
//! library.
//!
//! One output path: each command gathers a report from the library once,
//! then renders it as text or, with `--json`, as a `Serialize` struct.
//!
//! - `cli.rs`: the flags (clap) and the [`Action`](cli::Action) they ask for.
//! - `command.rs`: opens the file and runs the action: report, then output.
//! - `report/`: what each command gathers, one file per command (`summary`,
//!   `tensor`, `entries`, `lookup`, `dump`), and what they share.
//! - `text/`, `json/`: each report as text and as JSON, one file per
//!   command; `json/format.rs` is the one JSON writer.
//! - `output.rs` (standard output, `--quiet`), `exit_code.rs` (the exit
//!   statuses), `input.rs` (mapping or reading the file), `progress.rs`
//!   (the `--validate` bar), `shown.rs` (names and sizes as shown),
//!   `values.rs` (one element as text and as JSON).
//!
//! A new flag is a field of `Cli` in `cli.rs`. An option reaches the
//! report builder or renderer that uses it through `command.rs`; a new
//! command is also an `Action` variant (and its arm in `Cli::action`), an
//! arm of `command::execute`, and a file in each of `report/`, `text/` and
//! `json/`.
#![forbid(unsafe_code)]

mod cli;
mod command;
mod exit_code;
mod input;
mod json;
mod output;
mod progress;
mod report;
mod shown;
mod text;
mod values;

use std::process;

use clap::Parser;

use crate::cli::Cli;
use crate::exit_code::ExitCode;

fn main() -> process::ExitCode {
    match command::run(&Cli::parse()) {
        Ok(code) => code.into(),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::of(&e).into()
        }
    }
}
