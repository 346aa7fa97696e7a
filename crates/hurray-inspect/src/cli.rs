//! Command-line arguments (clap derive).

use std::path::{Path, PathBuf};

use clap::Parser;

const EXAMPLES: &str = "\
Examples:
  hurray-inspect model.hry                     header, KV metadata and tensor table
  hurray-inspect --validate model.hry          also check every tensor's data; exit 1 if invalid
  hurray-inspect --json model.hry | jq .kv     the same facts as one JSON object
  hurray-inspect --permissive odd.hry          accept what the spec lets a reader accept
  cat model.hry | hurray-inspect -             read the file from standard input

Exit status: 0 the file is readable (and valid, with --validate); 1 it is not,
with one `error: FILE: ...` line on stderr; 2 usage error.";

/// Inspect a Hurray tensor file: header, KV metadata, tensors.
#[derive(Debug, Parser)]
#[command(
    name = "hurray-inspect",
    version,
    about,
    long_about = "Inspect a Hurray tensor file: print its header facts (container version, \
                  flags, data_buffer_alignment), its KV metadata and a table of its tensors \
                  (name, element type, layout, shape, nnz, buffers, bytes, data offset).",
    after_help = EXAMPLES
)]
pub struct Cli {
    /// The Hurray file to read, or `-` for standard input.
    ///
    /// A file is memory-mapped; standard input is read into memory.
    ///
    /// Example: hurray-inspect weights.hry
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Also check every tensor's data and the file's padding; exit 1 if any check fails.
    ///
    /// Resolves every tensor, runs the data checks of the spec (sparse storage
    /// invariants, quantization parameters, padding bits) and, in strict mode, checks
    /// that the padding between regions is zero. Prints one line per tensor.
    ///
    /// Example: hurray-inspect --validate weights.hry
    #[arg(long)]
    pub validate: bool,

    /// Print one JSON object instead of tables (exact byte counts, full values).
    ///
    /// Keys: `file`, `kv`, `tensors` (and `padding` with --validate). KV integers are
    /// exact; float NaN and infinities are the strings "nan", "inf", "-inf"; bytes are
    /// arrays of byte values. A tensor whose descriptor cannot be read has null
    /// dtype, layout and shape, and an `error`.
    ///
    /// Example: hurray-inspect --json weights.hry | jq '.tensors[].shape'
    #[arg(long)]
    pub json: bool,

    /// Open in permissive mode: accept what the spec lets a reader accept.
    ///
    /// Unknown type, layout and quantization tags are kept (their data is not
    /// interpreted), sparse invariant scans and the padding check are skipped.
    /// Bounds and alignment checks stay on.
    ///
    /// Example: hurray-inspect --permissive --validate newer.hry
    #[arg(long)]
    pub permissive: bool,
}

/// Where the file comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input<'a> {
    /// Standard input (`-`).
    Stdin,
    /// A path to map.
    Path(&'a Path),
}

impl Cli {
    /// The input named by `FILE`.
    pub fn input(&self) -> Input<'_> {
        if self.file.as_os_str() == "-" {
            Input::Stdin
        } else {
            Input::Path(&self.file)
        }
    }

    /// How the file is named in messages: the path as given, `<stdin>` for `-`.
    pub fn display_name(&self) -> String {
        match self.input() {
            Input::Stdin => "<stdin>".to_owned(),
            Input::Path(path) => path.display().to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn dash_means_stdin() {
        let cli = Cli::try_parse_from(["hurray-inspect", "-"]).unwrap();
        assert_eq!(cli.input(), Input::Stdin);
        assert_eq!(cli.display_name(), "<stdin>");
    }

    #[test]
    fn flags_parse() {
        let cli = Cli::try_parse_from(["hurray-inspect", "--json", "--validate", "--permissive", "a.hry"]).unwrap();
        assert!(cli.json && cli.validate && cli.permissive);
        assert_eq!(cli.input(), Input::Path(Path::new("a.hry")));
    }

    #[test]
    fn unknown_flag_is_a_usage_error() {
        let e = Cli::try_parse_from(["hurray-inspect", "--bogus", "a.hry"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
    }
}
