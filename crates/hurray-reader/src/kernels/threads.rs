//! The threads of the parallel scans and products: how many, how the work
//! is cut, and where the parts run: the calling thread takes one, the
//! others go to a pool of threads kept for the process ([`scope`]), or,
//! where the OS will not start those, run on the calling thread too.

use rayon_core::{ThreadPool, ThreadPoolBuilder};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

/// Threads a scan or product may use; more are clamped.
pub(crate) const MAX_THREADS: usize = 64;

/// Where part `t` of `n` items cut into `threads` (at least 1) equal parts
/// starts: `n·t/threads`, without overflow for `t <= threads`.
pub(crate) fn share(n: usize, t: usize, threads: usize) -> usize {
    let threads = threads.max(1);
    (n / threads)
        .saturating_mul(t)
        .saturating_add((n % threads).saturating_mul(t) / threads)
}

/// The cores [`std::thread::available_parallelism`] reports (1 when it
/// cannot tell): the products start no more threads than that. Asked once
/// per process: on Linux the call reads cgroup files, about 50 µs a call
/// on the benchmark VM, as long as a small product itself.
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// The pool the parts run on: `cores() - 1` threads (at least one; the
/// calling thread takes a part of its own), started on first use and kept
/// for the process. `None` where the OS will not start them.
///
/// Why a pool rather than a thread a call: a thread started while its
/// parent runs may be queued on the parent's core, the other one idle,
/// until the balancer moves it a tick or two later (measured 2–4 ms on
/// the benchmark VM, `docs/perf-log/run-w.md`); a pool thread woken from
/// its sleep goes back to the core it slept on. Kept per process: a child
/// forked after the pool started has none of its threads (`fork` copies
/// the calling thread only), so it starts a pool of its own.
fn pool() -> Option<&'static ThreadPool> {
    static POOL: Mutex<Option<(u32, Option<&'static ThreadPool>)>> = Mutex::new(None);
    #[cfg(test)]
    if tests::REFUSE.with(std::cell::Cell::get) {
        return None;
    }
    let pid = std::process::id();
    if let Some((owner, pool)) = *POOL.lock().unwrap_or_else(PoisonError::into_inner) {
        if owner == pid {
            return pool;
        }
    }
    // Started without the lock held (a fork meanwhile would leave it held
    // in the child); of two racing starts the second is kept, the first
    // leaked with its idle threads.
    let pool = ThreadPoolBuilder::new()
        .num_threads(cores().saturating_sub(1).max(1))
        .thread_name(|i| format!("hurray-pool-{i}"))
        .build()
        .ok()
        .map(|pool| &*Box::leak(Box::new(pool)));
    *POOL.lock().unwrap_or_else(PoisonError::into_inner) = Some((pid, pool));
    pool
}

/// Runs `f` with a [`Scope`] whose [`spawn`](Scope::spawn)ed jobs all end
/// before `scope` returns (as [`std::thread::scope`]'s): on the threads of
/// [`pool`], or one after another on the calling thread where there is no
/// pool. A job's panic is raised again when the scope ends (the first if
/// several), so a part of a scan or product is never silently missing.
pub(crate) fn scope<'scope, R>(f: impl for<'a> FnOnce(&'a Scope<'a, 'scope>) -> R) -> R {
    match pool() {
        Some(pool) => pool.in_place_scope(|s| f(&Scope { pool: Some(s) })),
        None => f(&Scope { pool: None }),
    }
}

/// Runs `jobs` as the scans and products run their parts: the last on the
/// calling thread, the others on the [`pool`]; their results in order.
pub(crate) fn run_all<R: Send>(mut jobs: Vec<impl FnOnce() -> R + Send>) -> Vec<R> {
    let own = jobs.pop();
    scope(|s| {
        let others: Vec<_> = jobs.into_iter().map(|job| s.spawn(job)).collect();
        let own = own.map(|job| job());
        // A lost job (`None`) panicked: the scope raises that panic again.
        others.into_iter().filter_map(Job::join).chain(own).collect()
    })
}

/// Where [`scope`]'s jobs run: see there.
pub(crate) struct Scope<'a, 'scope> {
    pool: Option<&'a rayon_core::Scope<'scope>>,
}

impl<'scope> Scope<'_, 'scope> {
    /// Hands `job` to a thread of the pool (or, without one, runs it now,
    /// on the calling thread); its result comes back through [`Job::join`].
    pub(crate) fn spawn<R, F>(&self, job: F) -> Job<R>
    where
        F: FnOnce() -> R + Send + 'scope,
        R: Send + 'scope,
    {
        let Some(pool) = self.pool else {
            return Job::Done(Some(job()));
        };
        let slot = Arc::new(Slot {
            result: Mutex::new(None),
            ready: Condvar::new(),
        });
        let theirs = Arc::clone(&slot);
        pool.spawn(move |_| {
            // Unwinding through `job` drops this: the slot gets `None`.
            let lost = Lost(&theirs);
            let result = job();
            std::mem::forget(lost);
            theirs.put(Some(result));
        });
        Job::Pending(slot)
    }
}

/// A job handed to [`Scope::spawn`]: running on a thread of the pool, or
/// already done on the calling thread.
pub(crate) enum Job<R> {
    Pending(Arc<Slot<R>>),
    Done(Option<R>),
}

impl<R> Job<R> {
    /// The job's result, once it has run: `None` if it panicked (the panic
    /// is raised again when the [`scope`] ends).
    pub(crate) fn join(self) -> Option<R> {
        match self {
            Job::Pending(slot) => slot.take(),
            Job::Done(result) => result,
        }
    }
}

/// Where a pool thread leaves a job's result for [`Job::join`].
pub(crate) struct Slot<R> {
    /// `Some(result)` once the job has ended (`result` is `None` if it
    /// panicked).
    result: Mutex<Option<Option<R>>>,
    ready: Condvar,
}

impl<R> Slot<R> {
    fn put(&self, result: Option<R>) {
        *self.result.lock().unwrap_or_else(PoisonError::into_inner) = Some(result);
        self.ready.notify_all();
    }

    fn take(&self) -> Option<R> {
        let mut guard = self.result.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(result) = guard.take() {
                return result;
            }
            guard = self.ready.wait(guard).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// Marks its slot's job as lost when dropped (by a panic unwinding it).
struct Lost<'s, R>(&'s Slot<R>);

impl<R> Drop for Lost<'_, R> {
    fn drop(&mut self) {
        self.0.put(None);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        /// Set while [`refusing`] runs: this thread finds no pool.
        pub(super) static REFUSE: Cell<bool> = const { Cell::new(false) };
    }

    /// Runs `f` as where the OS refuses the pool's threads: every part on
    /// the calling thread.
    pub(crate) fn refusing<R>(f: impl FnOnce() -> R) -> R {
        REFUSE.with(|r| r.set(true));
        let result = f();
        REFUSE.with(|r| r.set(false));
        result
    }

    #[test]
    fn jobs_run_on_the_pool_or_without_one_on_the_calling_thread() {
        let caller = std::thread::current().id();
        let ids = |s: &Scope<'_, '_>| {
            (0..3)
                .map(|_| s.spawn(|| std::thread::current().id()))
                .collect::<Vec<_>>()
        };
        let refused: Vec<_> = refusing(|| scope(|s| ids(s).into_iter().map(Job::join).collect()));
        assert_eq!(refused, [Some(caller); 3]);
        let pooled: Vec<_> = scope(|s| ids(s).into_iter().map(Job::join).collect());
        assert!(
            pooled.iter().all(|id| matches!(id, Some(id) if *id != caller)),
            "{pooled:?}"
        );
        // Results come back to the job that asked, borrowing from the caller.
        let parts = [10u64, 20, 30];
        let sums: Vec<_> = scope(|s| {
            let jobs: Vec<_> = parts.iter().map(|p| s.spawn(move || p + 1)).collect();
            jobs.into_iter().map(Job::join).collect()
        });
        assert_eq!(sums, [Some(11), Some(21), Some(31)]);
    }

    #[test]
    fn a_panicking_job_joins_as_lost_and_panics_again_at_the_scope_end() {
        let mut joined = Some(0u8);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            scope(|s| joined = s.spawn(|| -> u8 { panic!("job 7") }).join())
        }));
        let payload = caught.expect_err("the job's panic reaches the caller");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"job 7"));
        assert_eq!(joined, None);
        // The pool still serves.
        assert_eq!(scope(|s| s.spawn(|| 5u8).join()), Some(5));
    }

    #[test]
    fn run_all_returns_every_result_in_order() {
        let jobs: Vec<_> = (0..5u64).map(|i| move || i * i).collect();
        assert_eq!(run_all(jobs), [0, 1, 4, 9, 16]);
        assert_eq!(run_all(Vec::<fn() -> u8>::new()), Vec::<u8>::new());
    }

    #[test]
    fn shares_cover_every_item_once() {
        assert_eq!((0..=3).map(|t| share(10, t, 3)).collect::<Vec<_>>(), [0, 3, 6, 10]);
        assert_eq!(share(usize::MAX, 7, 7), usize::MAX);
        assert_eq!(share(5, 1, 0), 5);
    }
}
