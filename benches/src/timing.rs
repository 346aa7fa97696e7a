//! Wall-clock medians for the binaries that print JSON (criterion does the
//! statistics of the `cargo bench` targets).

use std::time::{Duration, Instant};

/// Runs `f` `runs` times (after `warmup` untimed runs) and returns the
/// sorted durations.
pub fn sample<R>(warmup: usize, runs: usize, mut f: impl FnMut() -> R) -> Vec<Duration> {
    for _ in 0..warmup {
        std::hint::black_box(f());
    }
    let mut times: Vec<Duration> = (0..runs.max(1))
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(f());
            start.elapsed()
        })
        .collect();
    times.sort();
    times
}

/// Median of sorted durations, in seconds.
pub fn median_s(sorted: &[Duration]) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2].as_secs_f64(),
        n => (sorted[n / 2 - 1].as_secs_f64() + sorted[n / 2].as_secs_f64()) / 2.0,
    }
}

/// `{"median_s": .., "min_s": .., "max_s": .., "runs": ..}`.
pub fn summary(sorted: &[Duration]) -> serde_json::Value {
    serde_json::json!({
        "median_s": median_s(sorted),
        "min_s": sorted.first().map_or(f64::NAN, Duration::as_secs_f64),
        "max_s": sorted.last().map_or(f64::NAN, Duration::as_secs_f64),
        "runs": sorted.len(),
    })
}
