//! The exit statuses of the tool (docs/cli.md, "Exit status and errors").

use std::fmt;
use std::process;

/// How the run ended, as the status the shell sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// 0: the file is readable (and, with `--validate`, no check failed).
    Success,
    /// 1: the file cannot be read, or breaks a rule of the format.
    BadFile,
    /// 2: the request does not fit: an unknown flag or tensor, coordinates
    /// outside the shape, a command the layout cannot answer. Clap exits 2
    /// itself for what it rejects.
    Usage,
}

impl ExitCode {
    /// The status of a run that failed with `e`: [`ExitCode::Usage`] for a
    /// [`UsageError`], else [`ExitCode::BadFile`].
    pub fn of(e: &anyhow::Error) -> Self {
        if e.downcast_ref::<UsageError>().is_some() {
            ExitCode::Usage
        } else {
            ExitCode::BadFile
        }
    }

    /// The number the shell sees.
    pub fn status(self) -> u8 {
        match self {
            ExitCode::Success => 0,
            ExitCode::BadFile => 1,
            ExitCode::Usage => 2,
        }
    }
}

impl From<ExitCode> for process::ExitCode {
    fn from(code: ExitCode) -> Self {
        process::ExitCode::from(code.status())
    }
}

/// A request that does not fit the file ([`ExitCode::Usage`]), already
/// naming the file.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        assert_eq!(
            [ExitCode::Success, ExitCode::BadFile, ExitCode::Usage].map(ExitCode::status),
            [0, 1, 2]
        );
        assert_eq!(
            ExitCode::of(&anyhow::Error::new(UsageError("x".into()))),
            ExitCode::Usage
        );
        assert_eq!(ExitCode::of(&anyhow::anyhow!("x")), ExitCode::BadFile);
    }
}
