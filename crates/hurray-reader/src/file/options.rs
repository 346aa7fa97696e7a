//! How the reader applies the spec's rules ([`Mode`]) and how many threads
//! its scans may use ([`Options`]).

/// How strictly the reader applies the spec's rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Reject everything the spec forbids (the default).
    #[default]
    Strict,
    /// Accept what the spec lets a reader accept: unknown layout, type and
    /// quantization tags and extension layout ids (the descriptor is kept,
    /// its data is never interpreted), sparse invariant scans skipped,
    /// oversized dense and parameter buffers (the layout buffers of CSC,
    /// CSR, COO and CSF must have their exact size in both modes), extra
    /// bytes after the last field of a descriptor, the index or the KV
    /// section (both modes skip them in a newer minor version), gaps and
    /// non-zero padding between regions, a data region not at the first
    /// boundary after its descriptor, a statistics `nnz` that disagrees
    /// with the descriptor's (the descriptor's is used;
    /// [`Tensor::statistics_nnz_mismatch`](crate::Tensor::statistics_nnz_mismatch)
    /// reports it), a negative or NaN statistics `value_stddev` or an
    /// `nm_n` above `nm_m`
    /// ([`Tensor::statistics_rule_violation`](crate::Tensor::statistics_rule_violation)
    /// reports it). Regions still never overlap.
    /// Bounds, overflow and alignment checks stay on: permissive never means
    /// unsafe. A torn composite is an error in both modes (its members are
    /// readable alone in both).
    Permissive,
}

/// Options for [`HurrayFile::parse`](crate::HurrayFile::parse) and [`MappedFile::open`](crate::MappedFile::open).
///
/// ```
/// use hurray_reader::{Mode, Options};
/// let options = Options::strict().with_threads(4);
/// assert_eq!((options.mode, options.threads()), (Mode::Strict, 4));
/// assert_eq!(Options::default().threads(), 1);
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Strict (default) or permissive.
    pub mode: Mode,
    /// See [`threads`](Self::threads).
    threads: usize,
    /// See [`with_extension_layouts`](Self::with_extension_layouts).
    extension_layouts: &'static [u64],
}

impl Default for Options {
    fn default() -> Self {
        Options::strict()
    }
}

impl Options {
    /// Strict mode: every rule of the spec enforced; one thread.
    pub fn strict() -> Self {
        Options {
            mode: Mode::Strict,
            threads: 1,
            extension_layouts: &[],
        }
    }

    /// Permissive mode (see [`Mode::Permissive`]); one thread.
    pub fn permissive() -> Self {
        Options {
            mode: Mode::Permissive,
            ..Options::strict()
        }
    }

    /// These options with at most `threads` threads for the O(nnz)
    /// invariant scans; `0` counts as 1, more than 64 as 64. See
    /// [`threads`](Self::threads).
    #[must_use]
    pub fn with_threads(self, threads: usize) -> Self {
        Options {
            threads: threads.clamp(1, crate::kernels::threads::MAX_THREADS),
            ..self
        }
    }

    /// At most how many threads the O(nnz) invariant scans use (1 by
    /// default, at most 64): the CSC and CSR scan of a strict view
    /// ([`Tensor::csc`](crate::Tensor::csc), [`Tensor::csr`](crate::Tensor::csr)),
    /// and the CSC, CSR and sorted-COO scans of
    /// [`Tensor::validate_data`](crate::Tensor::validate_data) and
    /// [`HurrayFile::validate`](crate::HurrayFile::validate). The index array is cut into ranges of
    /// equal length, one per thread (a cut may fall inside a column), and
    /// arrays of fewer than 256 Ki entries per thread get fewer threads.
    /// Verdicts and errors do not depend on it: a failure is named by a
    /// sequential exact pass.
    ///
    /// **The threads.** The calling thread takes one range; the others go
    /// to the library's pool, [`std::thread::available_parallelism`] − 1
    /// threads (at least one), and the calling thread, its own range done,
    /// scans those no thread of the pool has started. The pool is started
    /// on first use and kept, asleep between calls, for the life of the
    /// process: from then on the process has those threads (on Python
    /// 3.12 and later, `os.fork` warns of that), and a child `fork`ed from
    /// it starts a pool of its own. The products (`mul_vec_parallel`) use
    /// the same pool; calls from several threads at once share it, so a
    /// call whose ranges are all scanned may still wait for the pool
    /// thread to finish a range of another call (the pool runs the parts
    /// handed to it in turn, and a call returns once the pool has reached
    /// its own, even those it scanned itself). `threads == 1` starts no
    /// pool. Where the OS will not start the pool (a limit on threads, no
    /// memory for their stacks) nothing fails: every range is scanned on
    /// the calling thread. With one thread the scans allocate nothing; with more, a
    /// few words a range a call, plus the pool's own once a process,
    /// never anything proportional to the data.
    pub fn threads(&self) -> usize {
        self.threads.max(1)
    }

    /// True in strict mode.
    pub fn is_strict(&self) -> bool {
        self.mode == Mode::Strict
    }

    /// These options with the `extension_layout_id`s of the
    /// implementation-private layouts (layout tags `0xF0`–`0xFE`) that the
    /// caller recognises. Strict mode rejects a descriptor with any other
    /// id (`metadata.md` § Layout-Specific Fields › Extension Layouts: a
    /// reader that does not recognise the id MUST reject it unless
    /// permissive); by default the list is empty. Either way this crate
    /// does not interpret the data of such a tensor
    /// ([`Tensor::not_viewable`](crate::Tensor::not_viewable)): the caller
    /// reads its buffers' bytes ([`Tensor::buffers`](crate::Tensor::buffers))
    /// and its `extension_data`.
    ///
    /// ```
    /// use hurray_reader::Options;
    /// const OURS: &[u64] = &[7];
    /// let options = Options::strict().with_extension_layouts(OURS);
    /// assert!(options.recognises_extension_layout(7));
    /// assert!(!Options::strict().recognises_extension_layout(7));
    /// ```
    #[must_use]
    pub fn with_extension_layouts(self, ids: &'static [u64]) -> Self {
        Options {
            extension_layouts: ids,
            ..self
        }
    }

    /// Whether `extension_layout_id` is one of
    /// [`with_extension_layouts`](Self::with_extension_layouts)' ids.
    pub fn recognises_extension_layout(&self, extension_layout_id: u64) -> bool {
        self.extension_layouts.contains(&extension_layout_id)
    }
}
