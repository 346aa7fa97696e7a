//! The threads of the parallel scans and products: how many, how the work
//! is cut, and how a thread is started without panicking when the OS
//! refuses one.

use std::sync::{Arc, Mutex};
use std::thread::{Builder, Scope, ScopedJoinHandle};

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

/// A job handed to [`spawn_or_run`]: running on a thread of its own, or
/// already done on the calling thread.
pub(crate) enum Job<'scope, R> {
    Thread(ScopedJoinHandle<'scope, Option<R>>),
    Done(Option<R>),
}

impl<R> Job<'_, R> {
    /// The job's result (`None` only if the job was lost: its slot's lock
    /// poisoned). A panic on the job's thread is raised again here, on the
    /// joining thread, as [`Scope::spawn`] raises it at the scope's end: a
    /// part of a product or scan is never silently missing.
    pub(crate) fn join(self) -> Option<R> {
        match self {
            Job::Thread(handle) => handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Job::Done(result) => result,
        }
    }
}

/// Runs `job` on a new thread of `scope`, or on the calling thread, before
/// returning, when the OS will not start one (a limit on threads, no
/// memory for a stack: [`Builder::spawn_scoped`] fails). The work gets done
/// either way: a parallel scan or product runs its parts one after another
/// rather than panicking as [`Scope::spawn`] would. A job left to the
/// scope's end (not joined) has a panic re-raised there, as with
/// `Scope::spawn`.
pub(crate) fn spawn_or_run<'scope, R, F>(scope: &'scope Scope<'scope, '_>, job: F) -> Job<'scope, R>
where
    F: FnOnce() -> R + Send + 'scope,
    R: Send + 'scope,
{
    // The job waits in a slot both threads can reach: `spawn_scoped` drops
    // its closure when it fails, and the calling thread takes it back.
    let slot = Arc::new(Mutex::new(Some(job)));
    let theirs = Arc::clone(&slot);
    let run = move || {
        let job = theirs.lock().ok()?.take()?;
        Some(job())
    };
    match builder().spawn_scoped(scope, run) {
        Ok(handle) => Job::Thread(handle),
        Err(_) => Job::Done(slot.lock().ok().and_then(|mut s| s.take()).map(|job| job())),
    }
}

/// The builder of every thread; in this crate's tests, one the OS refuses
/// while `tests::refusing` runs.
fn builder() -> Builder {
    #[cfg(test)]
    if tests::REFUSE.with(std::cell::Cell::get) {
        // A stack larger than the address space: `mmap` fails, so does the spawn.
        return Builder::new().stack_size(1 << 50);
    }
    Builder::new()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        /// Set while [`refusing`] runs: the OS refuses this thread's spawns.
        pub(super) static REFUSE: Cell<bool> = const { Cell::new(false) };
    }

    /// Runs `f` with every thread it starts refused by the OS.
    pub(crate) fn refusing<R>(f: impl FnOnce() -> R) -> R {
        REFUSE.with(|r| r.set(true));
        let result = f();
        REFUSE.with(|r| r.set(false));
        result
    }

    #[test]
    fn a_refused_thread_runs_its_job_on_the_calling_thread() {
        let caller = std::thread::current().id();
        let ran_on = std::thread::scope(|scope| {
            let job = refusing(|| spawn_or_run(scope, || std::thread::current().id()));
            assert!(matches!(job, Job::Done(_)));
            job.join()
        });
        assert_eq!(ran_on, Some(caller));
        let other = std::thread::scope(|scope| spawn_or_run(scope, || std::thread::current().id()).join());
        assert!(matches!(other, Some(id) if id != caller));
    }

    #[test]
    fn a_panicking_job_panics_again_at_join() {
        let caught = std::panic::catch_unwind(|| {
            std::thread::scope(|scope| spawn_or_run(scope, || -> u8 { panic!("job 7") }).join())
        });
        let payload = caught.expect_err("the job's panic reaches the joining thread");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"job 7"));
    }

    #[test]
    fn shares_cover_every_item_once() {
        assert_eq!((0..=3).map(|t| share(10, t, 3)).collect::<Vec<_>>(), [0, 3, 6, 10]);
        assert_eq!(share(usize::MAX, 7, 7), usize::MAX);
        assert_eq!(share(5, 1, 0), 5);
    }
}
