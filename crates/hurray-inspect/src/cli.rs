//! Command-line arguments (clap derive).

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use clap::{ArgGroup, Parser};

const EXAMPLES: &str = "\
Examples:
  # Header, KV metadata, and every tensor's name, dtype, layout, shape, nnz and size
  hurray-inspect model.hry
  # One tensor: each descriptor field's file offset, raw bytes (hex) and meaning;
  # its index entry; each buffer's file range, alignment, role, type and count
  hurray-inspect model.hry --tensor A
  # The first 10 stored entries (row, col, value); dense tensors: elements
  hurray-inspect model.hry --tensor A --head 10
  # One element; one a sparse tensor does not store prints as an implicit zero
  hurray-inspect model.hry --tensor A --get 2,1
  # Column 3 of a CSC matrix (--row I for a CSR matrix)
  hurray-inspect model.hry --tensor A --column 3
  # Every value and index array, as JSON
  hurray-inspect model.hry --tensor A --dump --json
  # Also check every tensor's data; exit 1 if anything is invalid
  hurray-inspect --validate model.hry
  # Any command's output as JSON (schemas: docs/cli.md)
  hurray-inspect --json model.hry | jq '.tensors[] | {name, shape, nnz}'
  # Accept what the spec lets a reader accept (unknown tags kept, their data not read)
  hurray-inspect --permissive odd.hry
  # No output, only the exit status (and the error line on failure)
  hurray-inspect -q --validate model.hry
  # Read the file from standard input (a pipe: at most --stdin-limit bytes)
  cat model.hry | hurray-inspect -
  # Read the file into memory: for a file that may change while it is read
  hurray-inspect --no-mmap --validate /mnt/shared/model.hry

--head, --get, --column, --row and --dump need --tensor NAME unless the file holds
exactly one tensor. They read only what they show: use --validate for the full check.

Exit status: 0 the file is readable (with --validate: no check failed; a tensor
whose data cannot be checked is SKIPPED, not failed); 1 it is not, with one
`error: FILE: ...` line on stderr; 2 usage error.";

/// Inspect a Hurray tensor file: header, KV metadata, tensors, descriptors, values.
#[derive(Debug, Parser)]
#[command(
    name = "hurray-inspect",
    version,
    about,
    long_about = "Inspect a Hurray tensor file: print its header facts (container version, \
                  flags, data_buffer_alignment), its KV metadata and a table of its tensors \
                  (name, element type, layout, shape, nnz, buffers, bytes, data offset); or \
                  one tensor's descriptor byte by byte (--tensor), its first entries (--head), \
                  one element (--get), one column or row (--column, --row), or all of its \
                  arrays (--dump).",
    after_help = EXAMPLES,
    group(ArgGroup::new("data").multiple(false).args(["head", "get", "column", "row", "dump"])),
)]
pub struct Cli {
    /// The Hurray file to read, or `-` for standard input.
    ///
    /// A regular file is memory-mapped (read into memory with --no-mmap),
    /// and so is standard input redirected from a file (`- < f.hry`). A
    /// path that is not a regular file (a FIFO such as `<(cat f.hry)`, a
    /// socket, a device) is refused at once: give a stream on standard
    /// input. A pipe is read into memory (about 1.25 times the file's size
    /// at the peak), at most --stdin-limit bytes.
    ///
    /// Example: hurray-inspect weights.hry
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Show one tensor in detail: its index entry, every descriptor field
    /// (absolute offset, raw bytes in hex, decoded meaning) and every buffer
    /// (file range, alignment, role, element type and count).
    ///
    /// With --head, --get, --column, --row or --dump: the tensor they read.
    /// A malformed descriptor prints the fields read before the problem, then
    /// the problem, and exits 1. NAME is the exact name, or the name as the
    /// tool prints it (control characters escaped: a\0b).
    ///
    /// Example: hurray-inspect weights.hry --tensor A
    #[arg(short = 't', long, value_name = "NAME")]
    pub tensor: Option<String>,

    /// Print the first N stored entries: CSC column by column, CSR row by
    /// row, COO in storage order, CSF in leaf order (the order of its
    /// values), dense tensors in logical row-major order, each with its
    /// coordinates.
    ///
    /// Reads only those entries (and the pointers leading to them). At most
    /// 1048576 (they are held in memory); --dump streams every value.
    ///
    /// Example: hurray-inspect weights.hry --tensor A --head 10
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = head_count)]
    pub head: Option<u64>,

    /// Print one element, at comma-separated coordinates (one per dimension).
    ///
    /// An element a sparse tensor does not store prints as `0 (implicit zero)`.
    /// A quantized tensor's element prints as its stored code and its
    /// dequantized value. A scalar (rank 0) takes the empty list: --get ''.
    ///
    /// Example: hurray-inspect weights.hry --tensor A --get 2,1
    #[arg(long, value_name = "I,J,...", allow_hyphen_values = true)]
    pub get: Option<Coords>,

    /// Print the stored entries of column J of a CSC matrix (row, value).
    ///
    /// Every entry, streamed as it is read (constant memory, however long the
    /// column). The whole column is checked (rows sorted, in bounds) first,
    /// as --get checks the column it searches.
    ///
    /// Example: hurray-inspect weights.hry --tensor A --column 3
    #[arg(long, value_name = "J", allow_hyphen_values = true, value_parser = column_index)]
    pub column: Option<u64>,

    /// Print the stored entries of row I of a CSR matrix (column, value).
    ///
    /// Example: hurray-inspect weights.hry --tensor B --row 0
    #[arg(long, value_name = "I", allow_hyphen_values = true, value_parser = row_index)]
    pub row: Option<u64>,

    /// Print every value and index array of the tensor, buffer by buffer,
    /// decoded (float16, bfloat16 and packed sub-byte types included).
    ///
    /// With --json: one object with name, dtype, layout, shape, nnz and
    /// `buffers` (role, element_type, byte_size, values), written as it is read.
    ///
    /// Example: hurray-inspect weights.hry --tensor A --dump --json
    #[arg(long)]
    pub dump: bool,

    /// Also check every tensor's data and the file's padding; exit 1 if any check fails.
    ///
    /// Resolves every tensor, runs the data checks of the spec (sparse storage
    /// invariants, quantization parameters, padding bits) and, in strict mode, checks
    /// that the padding between regions is zero. Prints one line per tensor:
    /// OK, INVALID and the error, or SKIPPED when its data cannot be checked
    /// (an unknown tag or an extension layout, kept by --permissive). With
    /// --tensor: checks that tensor's data only. Shows a progress bar on a
    /// terminal when a scan takes a while.
    ///
    /// Example: hurray-inspect --validate weights.hry
    #[arg(long, conflicts_with = "data")]
    pub validate: bool,

    /// Print one JSON object instead of tables (exact byte counts, full values).
    ///
    /// Summary keys: `file`, `kv`, `kv_types`, `tensors` (and `padding` with --validate). KV
    /// integers are exact; float NaN and infinities are the strings "nan", "inf",
    /// "-inf"; bytes are arrays of byte values. A tensor whose descriptor cannot be
    /// read has null dtype, layout and shape, and an `error`. Every other command
    /// has its own object: see docs/cli.md. A file that fails before anything
    /// can be shown (it does not open, the tensor does not resolve, or what a
    /// data command reads breaks a rule) gives `{"error": ..., "error_at":
    /// {field, offset, rule}, "tensor": ...}`, besides the stderr line.
    ///
    /// Example: hurray-inspect --json weights.hry | jq '.tensors[].shape'
    #[arg(long)]
    pub json: bool,

    /// Open in permissive mode: accept what the spec lets a reader accept.
    ///
    /// Unknown type, layout and quantization tags are kept (their data is not
    /// interpreted) and unknown trailing descriptor bytes skipped. Bounds and
    /// alignment are still checked; --validate still runs the sparse
    /// invariant scans, but skips the padding check.
    ///
    /// Example: hurray-inspect --permissive --validate newer.hry
    #[arg(long)]
    pub permissive: bool,

    /// Threads for the data checks of --validate (default: the available parallelism; at most 64 are used).
    ///
    /// Each CSC, CSR or sorted-COO scan is cut into equal ranges checked in
    /// parallel (small arrays use fewer threads). Verdicts and error messages do
    /// not depend on it; --threads 1 checks on the main thread only. Without
    /// --validate nothing is scanned, and --threads is a usage error.
    ///
    /// Example: hurray-inspect --validate --threads 1 weights.hry
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = thread_count, requires = "validate")]
    pub threads: Option<u16>,

    /// Read the file into memory instead of mapping it.
    ///
    /// For a file that may be truncated or rewritten while it is read (one
    /// being written, on shared or network storage): with the mapping, such
    /// a change ends the process with SIGBUS (the shell reports status
    /// 135). Costs memory of the file's size and a read of every byte
    /// first; the output and the exit status are the same.
    ///
    /// Example: hurray-inspect --no-mmap --validate /mnt/shared/weights.hry
    #[arg(long)]
    pub no_mmap: bool,

    /// The most bytes read into memory from standard input (`-`): bytes, or
    /// with a K, M, G or T suffix (powers of 1024).
    ///
    /// A pipe (or, with --no-mmap, a redirected file) is held in memory
    /// whole: past this many bytes the tool stops reading and exits 1.
    ///
    /// Example: hurray-inspect --stdin-limit 16G - < <(zcat big.hry.gz)
    #[arg(long, value_name = "SIZE", value_parser = byte_size, default_value = "4G")]
    pub stdin_limit: u64,

    /// Print nothing on stdout: only the exit status and, on failure, the error line.
    ///
    /// Example: hurray-inspect -q --validate weights.hry && echo valid
    #[arg(short, long)]
    pub quiet: bool,
}

/// Coordinates of one element, parsed from `2,1` (empty for a scalar).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coords(pub Vec<u64>);

impl FromStr for Coords {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim().is_empty() {
            return Ok(Coords(Vec::new()));
        }
        s.split(',')
            .map(|part| {
                parse_u64(
                    part.trim(),
                    "coordinate",
                    "non-negative integers separated by commas, e.g. 2,1",
                )
            })
            .collect::<Result<Vec<u64>, String>>()
            .map(Coords)
    }
}

/// `--column J`: a column index, with the messages of `--get`'s coordinates
/// (clap's own would call `-1` an unexpected argument).
fn column_index(s: &str) -> Result<u64, String> {
    parse_u64(s.trim(), "column index", "a non-negative integer, e.g. 3")
}

/// `--row I`: a row index, as [`column_index`].
fn row_index(s: &str) -> Result<u64, String> {
    parse_u64(s.trim(), "row index", "a non-negative integer, e.g. 0")
}

/// `--head N`: a count of entries, at most [`MAX_LISTED`](crate::report::entries::MAX_LISTED).
fn head_count(s: &str) -> Result<u64, String> {
    let max = crate::report::entries::MAX_LISTED;
    let s = s.trim();
    match s.parse::<u64>() {
        Ok(n) if n <= max => Ok(n),
        Err(e) if *e.kind() != std::num::IntErrorKind::PosOverflow => Err(format!(
            "`{s}` is not a count: expected a non-negative integer up to {max}, e.g. 10"
        )),
        _ => Err(format!(
            "--head lists at most {max} entries (they are held in memory); --dump streams every value"
        )),
    }
}

/// `--stdin-limit SIZE`: bytes, or with a `K`, `M`, `G` or `T` suffix
/// (powers of 1024; `KiB`, `k`, `KB` read the same).
fn byte_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let digits = s.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = s.get(digits.len()..).unwrap_or_default();
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => {
            return Err(format!(
                "`{s}` is not a size: expected bytes, or a number with K, M, G or T, e.g. 8G"
            ))
        }
    };
    let n = digits
        .trim()
        .parse::<u64>()
        .map_err(|_| format!("`{s}` is not a size: expected bytes, or a number with K, M, G or T, e.g. 8G"))?;
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("size {s} is too large: at most 2^64 - 1 bytes"))
}

/// `--threads N`: 1 to 65535 (the library uses at most 64).
fn thread_count(s: &str) -> Result<u16, String> {
    let s = s.trim();
    match s.parse::<u64>() {
        Ok(n) if (1..=u64::from(u16::MAX)).contains(&n) => u16::try_from(n).map_err(|e| e.to_string()),
        Err(e) if *e.kind() != std::num::IntErrorKind::PosOverflow => Err(format!(
            "`{s}` is not a thread count: expected an integer from 1 to 65535, e.g. 2"
        )),
        _ => Err(format!("thread count {s} is out of range: expected 1 to 65535")),
    }
}

/// `part` as a `u64` coordinate or index; an error names it as a `what`
/// and says what was `expected`.
fn parse_u64(part: &str, what: &str, expected: &str) -> Result<u64, String> {
    part.parse::<u64>().map_err(|e| match e.kind() {
        std::num::IntErrorKind::PosOverflow => {
            format!("{what} `{part}` is larger than any dimension can be (2^64 - 1)")
        }
        _ => format!("`{part}` is not a {what}: expected {expected}"),
    })
}

impl fmt::Display for Coords {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(u64::to_string).collect();
        f.write_str(&parts.join(","))
    }
}

/// Where the file comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input<'a> {
    /// Standard input (`-`).
    Stdin,
    /// A path to map.
    Path(&'a Path),
}

/// What to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// The file summary (with `--validate`: and the verdicts).
    Summary,
    /// One tensor's descriptor and buffers (with `--validate`: and its data check).
    Tensor,
    /// The first N stored entries.
    Head(u64),
    /// One element.
    Get(Vec<u64>),
    /// One column of a CSC matrix.
    Column(u64),
    /// One row of a CSR matrix.
    Row(u64),
    /// Every buffer's values.
    Dump,
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

    /// Threads for the data checks: `--threads`, else what the machine offers.
    pub fn threads(&self) -> usize {
        self.threads.map_or_else(
            || std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
            usize::from,
        )
    }

    /// How the file is named in messages: the path as given (control
    /// characters escaped), `<stdin>` for `-`.
    pub fn display_name(&self) -> String {
        match self.input() {
            Input::Stdin => "<stdin>".to_owned(),
            Input::Path(path) => hurray_reader::shown_path(path),
        }
    }

    /// The command the flags ask for (clap lets at most one data flag through).
    pub fn action(&self) -> Action {
        if let Some(n) = self.head {
            Action::Head(n)
        } else if let Some(c) = &self.get {
            Action::Get(c.0.clone())
        } else if let Some(j) = self.column {
            Action::Column(j)
        } else if let Some(i) = self.row {
            Action::Row(i)
        } else if self.dump {
            Action::Dump
        } else if self.tensor.is_some() {
            Action::Tensor
        } else {
            Action::Summary
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
        assert_eq!(cli.action(), Action::Summary);
    }

    #[test]
    fn threads_default_to_the_machine() {
        let cli = Cli::try_parse_from(["hurray-inspect", "--validate", "a.hry"]).unwrap();
        let machine = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        assert_eq!((cli.threads, cli.threads()), (None, machine));
        let cli = Cli::try_parse_from(["hurray-inspect", "--validate", "--threads", "3", "a.hry"]).unwrap();
        assert_eq!(cli.threads(), 3);
        for bad in ["0", "-1", "x", "70000"] {
            let e = Cli::try_parse_from(["hurray-inspect", "--validate", "--threads", bad, "a.hry"]).unwrap_err();
            assert_eq!(
                (e.exit_code(), e.kind()),
                (2, clap::error::ErrorKind::ValueValidation),
                "--threads {bad}"
            );
        }
        // Only --validate scans: --threads without it would be ignored.
        let e = Cli::try_parse_from(["hurray-inspect", "--threads", "2", "a.hry"]).unwrap_err();
        assert_eq!(
            (e.exit_code(), e.kind()),
            (2, clap::error::ErrorKind::MissingRequiredArgument)
        );
    }

    #[test]
    fn unknown_flag_is_a_usage_error() {
        let e = Cli::try_parse_from(["hurray-inspect", "--bogus", "a.hry"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn commands() {
        let parse = |args: &[&str]| {
            let mut all = vec!["hurray-inspect", "a.hry"];
            all.extend_from_slice(args);
            Cli::try_parse_from(all).map(|c| c.action())
        };
        assert_eq!(parse(&["-t", "A"]).unwrap(), Action::Tensor);
        assert_eq!(parse(&["--tensor", "A", "--head", "3"]).unwrap(), Action::Head(3));
        assert_eq!(parse(&["--get", "2, 1"]).unwrap(), Action::Get(vec![2, 1]));
        assert_eq!(parse(&["--get", "1,1,2"]).unwrap(), Action::Get(vec![1, 1, 2]));
        assert_eq!(parse(&["--get", ""]).unwrap(), Action::Get(vec![]));
        assert_eq!(parse(&["--column", "3"]).unwrap(), Action::Column(3));
        assert_eq!(parse(&["--row", "0"]).unwrap(), Action::Row(0));
        assert_eq!(parse(&["--dump"]).unwrap(), Action::Dump);
        for bad in [
            &["--get", "2,x"][..],
            &["--get", "2,,1"],
            &["--get", "-1,2"],
            &["--head", "3", "--dump"],
            &["--column", "1", "--row", "1"],
            &["--validate", "--head", "3"],
            &["--head", "-2"],
        ] {
            let e = parse(bad).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad:?}");
        }
    }

    #[test]
    fn stdin_limit_takes_sizes() {
        let limit = |args: &[&str]| {
            let mut all = vec!["hurray-inspect", "-"];
            all.extend_from_slice(args);
            Cli::try_parse_from(all).map(|c| c.stdin_limit)
        };
        assert_eq!(limit(&[]).unwrap(), 4 << 30);
        for (given, bytes) in [
            ("0", 0),
            ("16467", 16467),
            ("1K", 1024),
            ("2kib", 2048),
            ("3M", 3 << 20),
            ("16G", 16 << 30),
            ("1T", 1 << 40),
            ("5B", 5),
        ] {
            assert_eq!(limit(&["--stdin-limit", given]).unwrap(), bytes, "{given}");
        }
        for bad in ["", "G", "-1", "1.5G", "3X", "16777216T"] {
            let e = limit(&["--stdin-limit", bad]).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad}");
        }
        let cli = Cli::try_parse_from(["hurray-inspect", "--no-mmap", "a.hry"]).unwrap();
        assert!(cli.no_mmap);
    }

    #[test]
    fn coords_round_trip() {
        let c: Coords = "2,1".parse().unwrap();
        assert_eq!(c.to_string(), "2,1");
        assert!("".parse::<Coords>().unwrap().0.is_empty());
        let e = "99999999999999999999,0".parse::<Coords>().unwrap_err();
        assert!(e.contains("larger than any dimension"), "{e}");
        let e = "-1,0".parse::<Coords>().unwrap_err();
        assert!(e.contains("`-1` is not a coordinate"), "{e}");
    }
}
