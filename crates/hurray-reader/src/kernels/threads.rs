//! The threads of the parallel scans and products: how many, how the work
//! is cut, and where the parts run: the calling thread takes one, the
//! others go to a pool of threads kept for the process ([`scope`]), or,
//! where the OS will not start those, run on the calling thread too.

use rayon_core::{ThreadPool, ThreadPoolBuilder};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
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

/// `items` cut into `parts` (at least 1) consecutive ranges at
/// [`share`]: each range's first position and its slice, in order,
/// covering `items` once.
pub(crate) fn cut_mut<T>(items: &mut [T], parts: usize) -> Vec<(usize, &mut [T])> {
    let parts = parts.max(1);
    let n = items.len();
    let mut cut = Vec::with_capacity(parts);
    let (mut rest, mut from) = (items, 0usize);
    for t in 1..parts {
        let to = share(n, t, parts).clamp(from, from.saturating_add(rest.len()));
        let (part, tail) = std::mem::take(&mut rest).split_at_mut(to.saturating_sub(from));
        cut.push((from, part));
        (rest, from) = (tail, to);
    }
    cut.push((from, rest));
    cut
}

/// The cores [`std::thread::available_parallelism`] reports (1 when it
/// cannot tell): the products cut their work into no more parts than
/// that, and the pool has one thread fewer. Asked once per process: on
/// Linux the call reads cgroup files, about 50 µs a call on the benchmark
/// VM, as long as a small product itself. (An atomic, not a `OnceLock`:
/// a `fork` while another thread filled a `OnceLock` would leave the
/// child waiting on it for ever.)
pub(crate) fn cores() -> usize {
    static CORES: AtomicUsize = AtomicUsize::new(0);
    match CORES.load(Ordering::Relaxed) {
        0 => {
            let cores = std::thread::available_parallelism().map_or(1, usize::from);
            CORES.store(cores, Ordering::Relaxed);
            cores
        }
        cores => cores,
    }
}

/// The pool the parts run on: `cores() - 1` threads (at least one; the
/// calling thread takes a part of its own), started on first use and kept
/// for the process; `None` where the OS will not start them (tried again
/// on the next call).
///
/// Why a pool rather than a thread a call: a thread started while its
/// parent runs may be queued on the parent's core, the other one idle: on
/// the benchmark VM it waited 3.3 ms for the parent's time slice to end
/// and the two shared that core until the balancer moved one, 7–8 ms in
/// (`docs/perf-log/run-w.md`). A pool thread woken from its sleep wakes on
/// the core it slept on.
///
/// Kept with the process id: a child `fork`ed after the pool started has
/// none of its threads (`fork` copies the calling thread only), so it
/// starts a pool of its own, and its parent's stays allocated, unused.
/// The lock is held only to read or set that pair, never while a pool
/// starts: a `fork` from another thread at that instant would leave it
/// held in the child (as with any lock; Python 3.12 warns of `fork` in a
/// process with threads for that reason).
fn pool() -> Option<&'static ThreadPool> {
    static POOL: Mutex<Option<(u32, &'static ThreadPool)>> = Mutex::new(None);
    #[cfg(test)]
    if tests::REFUSE.with(std::cell::Cell::get) {
        return None;
    }
    let pid = std::process::id();
    let ours =
        |kept: &Option<(u32, &'static ThreadPool)>| kept.filter(|&(owner, _)| owner == pid).map(|(_, pool)| pool);
    if let Some(pool) = ours(&POOL.lock().unwrap_or_else(PoisonError::into_inner)) {
        return Some(pool);
    }
    let started = ThreadPoolBuilder::new()
        .num_threads(cores().saturating_sub(1).max(1))
        .thread_name(|i| format!("hurray-pool-{i}"))
        .build()
        .ok()?;
    let mut kept = POOL.lock().unwrap_or_else(PoisonError::into_inner);
    // Another thread's start may have been kept meanwhile: then this one
    // is dropped (its threads end) and that one used.
    Some(ours(&kept).unwrap_or_else(|| {
        let pool: &'static ThreadPool = Box::leak(Box::new(started));
        *kept = Some((pid, pool));
        pool
    }))
}

/// Runs `f` with a [`Scope`] whose [`spawn`](Scope::spawn)ed parts all end
/// before `scope` returns (as [`std::thread::scope`]'s): on the threads of
/// [`pool`] or, where there is no pool, on the calling thread.
pub(crate) fn scope<'scope, R>(f: impl for<'a> FnOnce(&'a Scope<'a, 'scope>) -> R) -> R {
    match pool() {
        Some(pool) => pool.in_place_scope(|s| f(&Scope { pool: Some(s) })),
        None => f(&Scope { pool: None }),
    }
}

/// Runs `jobs` as the scans and products run their parts: the last on the
/// calling thread, the others handed to the [`pool`]; their results in
/// order.
pub(crate) fn run_all<R: Send>(mut jobs: Vec<impl FnOnce() -> R + Send>) -> Vec<R> {
    let own = jobs.pop();
    scope(|s| {
        let others: Vec<_> = jobs.into_iter().map(|job| s.spawn(job)).collect();
        let own = own.map(|job| job());
        join_all(others).into_iter().chain(own).collect()
    })
}

/// Each job's result, in order. Joined from the last: the pool's threads
/// take the parts from the first, so the calling thread runs those they
/// have not started (see [`Job::join`]).
pub(crate) fn join_all<R>(jobs: Vec<Job<'_, R>>) -> Vec<R> {
    let mut results: Vec<R> = jobs.into_iter().rev().map(Job::join).collect();
    results.reverse();
    results
}

/// Where [`scope`]'s parts run: see there.
pub(crate) struct Scope<'a, 'scope> {
    pool: Option<&'a rayon_core::Scope<'scope>>,
}

impl<'scope> Scope<'_, 'scope> {
    /// Hands `job` to the pool (without one, runs it now, on the calling
    /// thread); its result comes back through [`Job::join`], which runs it
    /// itself if no thread of the pool has started it.
    pub(crate) fn spawn<R, F>(&self, job: F) -> Job<'scope, R>
    where
        F: FnOnce() -> R + Send + 'scope,
        R: Send + 'scope,
    {
        let slot = Arc::new(Slot {
            state: Mutex::new(State::Waiting(Box::new(job))),
            ended: Condvar::new(),
        });
        match self.pool {
            Some(pool) => {
                let theirs = Arc::clone(&slot);
                pool.spawn(move |_| theirs.run());
            }
            None => slot.run(),
        }
        Job { slot }
    }
}

/// A part handed to [`Scope::spawn`]: waiting, running or done. Join it:
/// a panic of the part is raised again only there.
#[must_use = "a part's result (and its panic) comes back only through `join`"]
pub(crate) struct Job<'scope, R> {
    slot: Arc<Slot<'scope, R>>,
}

impl<R> Job<'_, R> {
    /// The part's result, once it has run: here, on the calling thread,
    /// if no thread of the pool has started it (so a part is never left
    /// waiting behind the thread that waits for it, even called from a
    /// thread of the pool). A panic of the part is raised again here.
    pub(crate) fn join(self) -> R {
        self.slot.run();
        let mut state = self.slot.lock();
        loop {
            match std::mem::replace(&mut *state, State::Joined) {
                State::Ended(result) => return result.unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                other => *state = other,
            }
            state = self.slot.ended.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// A part and its result, shared by the pool's thread and [`Job::join`].
struct Slot<'scope, R> {
    state: Mutex<State<'scope, R>>,
    ended: Condvar,
}

enum State<'scope, R> {
    Waiting(Box<dyn FnOnce() -> R + Send + 'scope>),
    Running,
    /// The part's result, or its panic.
    Ended(std::thread::Result<R>),
    Joined,
}

impl<'scope, R> Slot<'scope, R> {
    fn lock(&self) -> std::sync::MutexGuard<'_, State<'scope, R>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs the part unless a thread already has.
    fn run(&self) {
        let job = {
            let mut state = self.lock();
            match std::mem::replace(&mut *state, State::Running) {
                State::Waiting(job) => job,
                other => return *state = other,
            }
        };
        let result = std::panic::catch_unwind(AssertUnwindSafe(job));
        *self.lock() = State::Ended(result);
        self.ended.notify_all();
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::cell::Cell;
    use std::thread::ThreadId;
    use std::time::Duration;

    thread_local! {
        /// Set while [`refusing`] runs: this thread finds no pool.
        pub(super) static REFUSE: Cell<bool> = const { Cell::new(false) };
    }

    /// Runs `f` as where the OS refuses the pool's threads: every part on
    /// the calling thread.
    pub(crate) fn refusing<R>(f: impl FnOnce() -> R) -> R {
        struct Reset;
        impl Drop for Reset {
            fn drop(&mut self) {
                REFUSE.with(|r| r.set(false));
            }
        }
        REFUSE.with(|r| r.set(true));
        let _reset = Reset;
        f()
    }

    fn ids<'scope>(s: &Scope<'_, 'scope>, parts: usize, each: Duration) -> Vec<Job<'scope, ThreadId>> {
        (0..parts)
            .map(|_| {
                s.spawn(move || {
                    std::thread::sleep(each);
                    std::thread::current().id()
                })
            })
            .collect()
    }

    #[test]
    fn parts_run_on_the_pool_or_without_one_on_the_calling_thread() {
        let caller = std::thread::current().id();
        let refused = refusing(|| scope(|s| join_all(ids(s, 3, Duration::ZERO))));
        assert_eq!(refused, [caller; 3]);
        assert!(!REFUSE.with(Cell::get));
        let pooled = scope(|s| {
            let jobs = ids(s, 1, Duration::ZERO);
            std::thread::sleep(Duration::from_millis(50));
            join_all(jobs)
        });
        assert!(pooled[0] != caller, "{pooled:?}");
        // One pool for the process.
        assert!(std::ptr::eq(pool().unwrap(), pool().unwrap()));
        // Results come back to the part that asked, borrowing from the caller.
        let parts = [10u64, 20, 30];
        let sums = scope(|s| join_all(parts.iter().map(|p| s.spawn(move || p + 1)).collect()));
        assert_eq!(sums, [11, 21, 31]);
        assert_eq!(run_all((0..5u64).map(|i| move || i * i).collect()), [0, 1, 4, 9, 16]);
        assert_eq!(run_all(Vec::<fn() -> u8>::new()), Vec::<u8>::new());
    }

    #[test]
    fn the_caller_runs_the_parts_the_pool_has_not_started() {
        // More parts than the pool has threads: the caller, joining from
        // the last, runs some itself instead of waiting idle.
        let parts = cores().saturating_sub(1).max(1) + 3;
        let caller = std::thread::current().id();
        let ran = scope(|s| join_all(ids(s, parts, Duration::from_millis(20))));
        assert_eq!(ran.len(), parts);
        assert!(ran.contains(&caller), "{ran:?}");
        // A scope within a part on the pool's thread: the inner part runs
        // there too, not left waiting for a thread that waits for it.
        let nested = scope(|s| s.spawn(|| scope(|inner| inner.spawn(|| 5u8).join())).join());
        assert_eq!(nested, 5);
    }

    #[test]
    fn a_panicking_part_panics_again_at_its_join() {
        let caught = std::panic::catch_unwind(|| scope(|s| s.spawn(|| -> u8 { panic!("part 7") }).join()));
        let payload = caught.expect_err("the part's panic reaches the caller");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"part 7"));
        // The pool still serves.
        assert_eq!(scope(|s| s.spawn(|| 5u8).join()), 5);
    }

    #[test]
    fn shares_cover_every_item_once() {
        assert_eq!((0..=3).map(|t| share(10, t, 3)).collect::<Vec<_>>(), [0, 3, 6, 10]);
        assert_eq!(share(usize::MAX, 7, 7), usize::MAX);
        assert_eq!(share(5, 1, 0), 5);
    }

    #[test]
    fn cut_mut_covers_every_item_once() {
        let mut items = [0u8; 10];
        let cut = cut_mut(&mut items, 3);
        let ranges: Vec<(usize, usize)> = cut.iter().map(|(from, part)| (*from, part.len())).collect();
        assert_eq!(ranges, [(0, 3), (3, 3), (6, 4)]);
        assert_eq!(cut_mut(&mut items, 0).len(), 1);
        assert_eq!(cut_mut(&mut [0u8; 0], 2).iter().map(|(_, p)| p.len()).sum::<usize>(), 0);
    }
}
