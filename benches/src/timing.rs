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
    median(sorted.iter().map(Duration::as_secs_f64).collect())
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

/// Runs each of `routines` once per round, `rounds` times, starting each
/// round one routine further on (round `r` runs `r % n, r % n + 1, …`), after
/// one untimed round; returns each routine's durations in round order. A
/// slow stretch of the machine then hits every routine alike, where timing
/// one routine for seconds and then the next leaves it on one of them.
pub fn rotated(rounds: usize, routines: &mut [&mut dyn FnMut()]) -> Vec<Vec<Duration>> {
    let n = routines.len();
    let mut times = vec![Vec::with_capacity(rounds); n];
    for r in 0..=rounds {
        for k in 0..n {
            let i = (r + k) % n;
            let start = Instant::now();
            (routines[i])();
            if r > 0 {
                times[i].push(start.elapsed());
            }
        }
    }
    times
}

/// The median of `values` (NaN for none).
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotated_runs_every_routine_once_per_round_plus_a_warm_up() {
        let (mut a, mut b) = (0, 0);
        let times = rotated(4, &mut [&mut || a += 1, &mut || b += 1]);
        assert_eq!((a, b), (5, 5));
        assert_eq!(times.iter().map(Vec::len).collect::<Vec<_>>(), [4, 4]);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(vec![]).is_nan());
    }
}
