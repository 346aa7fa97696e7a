//! A one-line progress bar on stderr for `--validate`, drawn only when
//! stderr is a terminal and a tensor's scan has already taken a moment
//! (fast scans never flicker a bar), and erased when the scan ends.

use std::io::{self, IsTerminal, Write};
use std::time::{Duration, Instant};

use crate::shown::human_bytes;

/// How long a scan runs before the bar appears.
const DELAY: Duration = Duration::from_millis(300);
/// Least time between two redraws.
const REDRAW: Duration = Duration::from_millis(100);
/// Cells of the bar itself.
const WIDTH: u64 = 30;

/// Draws the bar of one scan at a time.
#[derive(Debug)]
pub struct Progress {
    enabled: bool,
}

impl Progress {
    /// A bar on stderr when it is a terminal and output is not `quiet`.
    pub fn stderr(quiet: bool) -> Self {
        Progress {
            enabled: !quiet && io::stderr().is_terminal(),
        }
    }

    /// Never draws.
    #[cfg(test)]
    pub fn disabled() -> Self {
        Progress { enabled: false }
    }

    /// Runs `scan`, handing it a `(done, total)` callback (bytes) that draws
    /// the bar for `label`; erases the bar when `scan` returns.
    pub fn run<R>(&mut self, label: &str, scan: impl FnOnce(&mut dyn FnMut(u64, u64)) -> R) -> R {
        if !self.enabled {
            return scan(&mut |_, _| {});
        }
        let start = Instant::now();
        let mut last_draw: Option<Instant> = None;
        let label: String = label.escape_debug().to_string().chars().take(32).collect();
        let mut draw = |done: u64, total: u64| {
            let now = Instant::now();
            let due = now.duration_since(start) >= DELAY && last_draw.is_none_or(|t| now.duration_since(t) >= REDRAW);
            if due {
                last_draw = Some(now);
                // A failed write to stderr only loses the bar.
                let _ = write!(io::stderr().lock(), "\r{}", line(&label, done, total));
            }
        };
        let result = scan(&mut draw);
        if last_draw.is_some() {
            // Carriage return, erase the line.
            let _ = write!(io::stderr().lock(), "\r\x1b[2K");
        }
        result
    }
}

/// `validating A [#########.....................]  30%  1.2 GiB / 4.0 GiB`.
pub fn line(label: &str, done: u64, total: u64) -> String {
    let done = done.min(total);
    let fraction = |scale: u64| {
        u128::from(done)
            .saturating_mul(u128::from(scale))
            .checked_div(u128::from(total))
            .map_or(scale, |f| u64::try_from(f).unwrap_or(scale))
    };
    let filled = usize::try_from(fraction(WIDTH)).unwrap_or(0);
    let empty = usize::try_from(WIDTH).unwrap_or(0).saturating_sub(filled);
    format!(
        "validating {label} [{}{}] {:>3}%  {} / {}",
        "#".repeat(filled),
        ".".repeat(empty),
        fraction(100),
        human_bytes(done),
        human_bytes(total)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_text() {
        assert_eq!(
            line("A", 0, 4 << 30),
            format!("validating A [{}]   0%  0 B / 4.0 GiB", ".".repeat(30))
        );
        assert_eq!(
            line("A", 3 << 29, 4 << 30),
            format!(
                "validating A [{}{}]  37%  1.5 GiB / 4.0 GiB",
                "#".repeat(11),
                ".".repeat(19)
            )
        );
        assert_eq!(
            line("w", 10, 10),
            format!("validating w [{}] 100%  10 B / 10 B", "#".repeat(30))
        );
        // Nothing to scan counts as done; done never exceeds total.
        assert_eq!(
            line("e", 0, 0),
            format!("validating e [{}] 100%  0 B / 0 B", "#".repeat(30))
        );
        assert_eq!(line("e", 20, 10), line("e", 10, 10));
    }

    #[test]
    fn disabled_bar_still_runs_the_scan() {
        let mut calls = 0;
        let r = Progress::disabled().run("A", |p| {
            p(1, 2);
            calls += 1;
            7
        });
        assert_eq!((r, calls), (7, 1));
    }
}
