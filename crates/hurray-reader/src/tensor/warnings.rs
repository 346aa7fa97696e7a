//! What the reader reports about a tensor it accepts: findings that are
//! not errors (advisory fields that disagree with the data's description,
//! a page-alignment SHOULD), one line each, worded once for every tool
//! (`hurray-inspect --validate`, the Python package's `validate()`).

use super::Tensor;
use crate::error::Scope;

impl Tensor<'_> {
    /// The findings about this tensor that do not reject it, one line each,
    /// without the tensor's name (the caller shows it), in this order:
    ///
    /// - a statistics `nnz` other than the descriptor's (permissive mode
    ///   only: strict mode rejects it, `layouts/csc.md` § Interaction with
    ///   Statistics Section);
    /// - a statistics field rule broken, e.g. a negative `value_stddev`
    ///   (permissive mode only, [`statistics_rule_violation`](Self::statistics_rule_violation));
    /// - a `sparsity_ratio` that disagrees with `nnz` (advisory,
    ///   `metadata.md` § Statistics Section);
    /// - a non-CPU buffer declaring less than page alignment
    ///   (`buffer-protocol.md` § Page Alignment).
    ///
    /// Reads the descriptor only; empty for a tensor with nothing to report.
    ///
    /// # Example
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry"))?;
    /// let bytes = hurray_reader::AlignedBytes::from_slice(&bytes);
    /// let file = hurray_reader::HurrayFile::parse(&bytes, hurray_reader::Options::default())?;
    /// assert!(file.tensor("A")?.warnings().is_empty());
    /// # Ok(()) }
    /// ```
    pub fn warnings(&self) -> Vec<String> {
        let nnz = self.statistics_nnz_mismatch().map(|(statistics, nnz)| {
            format!(
                "statistics nnz is {statistics}, but the descriptor's nnz is {nnz}: accepted by permissive \
                 mode, which uses the descriptor's (strict mode rejects it)"
            )
        });
        let statistics = self.statistics_rule_violation().map(|e| {
            // The caller names the tensor: the message without its scope.
            let (text, scope) = (e.to_string(), Scope::Tensor(self.name().into()).to_string());
            let text = text.strip_prefix(&scope).unwrap_or(&text);
            format!("{text}: accepted by permissive mode, which keeps the advisory block (strict mode rejects it)")
        });
        let sparsity = self.sparsity_ratio_mismatch().map(|(stored, expected)| {
            format!(
                "statistics sparsity_ratio is {stored}, but nnz gives {expected} \
                 (advisory only, metadata.md § Statistics Section)"
            )
        });
        let page = self
            .page_alignment_shortfall()
            .map(|shortfall| format!("{shortfall}; accepted, as a reader cannot know the writer's target"));
        nnz.into_iter().chain(statistics).chain(sparsity).chain(page).collect()
    }
}
