//! What the tool reports about a file, gathered from the library once and
//! rendered by both `human` and `json`. Every fact here comes from a
//! `hurray_reader` accessor; nothing is decoded in this crate.

use hurray_reader::{file_flags, Buffer, Descriptor, ElementType, Error, HurrayFile, KvValue, Layout, Scope, Tensor};

use crate::progress::Progress;

/// Everything printed about one file.
#[derive(Debug)]
pub struct Report<'data> {
    /// `(major, minor)`.
    pub container_version: (u8, u8),
    /// Names of the set `file_flags` bits (unknown bits as hex).
    pub flags: Vec<String>,
    pub data_buffer_alignment: u64,
    /// Strict mode (the default) or permissive.
    pub strict: bool,
    /// KV entries in file order.
    pub kv: Vec<(&'data str, KvValue<'data>)>,
    /// Tensors in footer index order.
    pub tensors: Vec<TensorReport<'data>>,
    /// Present with `--validate`.
    pub padding: Option<PaddingCheck>,
}

/// One tensor.
#[derive(Debug)]
pub struct TensorReport<'data> {
    pub name: &'data str,
    /// The index entry's `data_offset`.
    pub data_offset: u64,
    /// `None` when the descriptor could not be read (see `error`).
    pub info: Option<TensorInfo>,
    /// The tensor resolved (`tensor_at`): its buffers were located and
    /// checked. When not, `info` holds what the descriptor alone says (no
    /// buffers) and `error` why.
    pub resolved: bool,
    /// Whether `validate_data` ran (with `--validate`).
    pub validated: bool,
    /// Why the descriptor could not be read, or the data check that failed.
    pub error: Option<Error>,
    /// Advisory findings (never fatal).
    pub warnings: Vec<String>,
}

/// A `--validate` verdict: `Some(false)` with an error; `None` when the
/// tensor's data could not be checked (`not_viewable`: an unknown type,
/// layout or quantization scheme kept in permissive mode, an extension
/// layout); `Some(true)` otherwise, also for a composite head, which owns
/// no data and whose members are checked on their own.
pub fn verdict(error: bool, layout: Option<Layout>, not_viewable: Option<&str>) -> Option<bool> {
    if error {
        Some(false)
    } else if not_viewable.is_some() && layout != Some(Layout::Composite) {
        None
    } else {
        Some(true)
    }
}

/// A verdict's word in the text output's validation table.
pub fn verdict_word(verdict: Option<bool>) -> &'static str {
    match verdict {
        Some(true) => "OK",
        Some(false) => "INVALID",
        None => "SKIPPED",
    }
}

/// The name shown for an element type: the spec's (`float32`), or
/// `unknown(0x05)` for a type tag the reader does not know (permissive
/// mode), as an unknown layout reads `unknown(0x0c)`.
pub fn dtype_name(dtype: Option<ElementType>, type_tag: u8) -> String {
    dtype.map_or_else(|| format!("unknown(0x{type_tag:02x})"), |e| e.as_str().to_owned())
}

/// Facts from a tensor's descriptor.
#[derive(Debug)]
pub struct TensorInfo {
    /// `None` for an unknown type tag kept in permissive mode.
    pub element_type: Option<ElementType>,
    /// The descriptor's `type_tag` (shown when `element_type` is `None`).
    pub type_tag: u8,
    pub layout: Layout,
    pub shape: Vec<u64>,
    /// Sparse layouts only.
    pub nnz: Option<u64>,
    /// `None` when they were not located: the tensor did not resolve, or
    /// its layout is unknown (permissive) and hides the buffer table.
    pub buffers: Option<Vec<BufferInfo>>,
    /// Why the data is not interpreted (composite head, unknown tag, ...).
    pub not_viewable: Option<&'static str>,
}

/// One buffer handle, located in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferInfo {
    pub byte_size: u64,
    pub alignment: u64,
    /// Absolute offset of the buffer's first byte.
    pub offset: u64,
}

/// The file-level padding check of `--validate`.
#[derive(Debug)]
pub enum PaddingCheck {
    Ok,
    Invalid(Error),
    /// Not run, and why.
    Skipped(&'static str),
}

impl TensorInfo {
    /// Sum of the buffers' `byte_size` (saturating; the buffers lie in the file).
    pub fn total_bytes(&self) -> u64 {
        self.buffers
            .iter()
            .flatten()
            .fold(0u64, |sum, b| sum.saturating_add(b.byte_size))
    }
}

impl<'data> Report<'data> {
    /// Reads every fact from `file`: each tensor's descriptor is resolved
    /// (`tensor_at`); with `validate`, each tensor's data is checked (shown
    /// by `progress`; the scans run on the threads of the file's
    /// `Options`, progress is reported from this thread) and, in strict
    /// mode, the file's padding.
    pub fn build(file: &HurrayFile<'data>, validate: bool, progress: &mut Progress) -> Self {
        let tensors: Vec<TensorReport<'data>> = file
            .entries()
            .iter()
            .enumerate()
            .map(|(position, entry)| {
                let mut report = TensorReport {
                    name: entry.name(),
                    data_offset: entry.data_offset(),
                    info: None,
                    resolved: false,
                    validated: validate,
                    error: None,
                    warnings: Vec::new(),
                };
                match file.tensor_at(position) {
                    Ok(tensor) => {
                        report.info = Some(TensorInfo::from_tensor(&tensor));
                        report.resolved = true;
                        if validate {
                            report.error = progress
                                .run(entry.name(), |p| tensor.validate_data_with_progress(p))
                                .err();
                            report.warnings = warnings(&tensor);
                        }
                    }
                    Err(e) => {
                        report.info = file
                            .descriptor_at(position)
                            .ok()
                            .map(|d| TensorInfo::from_descriptor(&d));
                        report.error = Some(e);
                    }
                }
                report
            })
            .collect();
        let padding = validate.then(|| {
            if !file.options().is_strict() {
                PaddingCheck::Skipped("permissive mode")
            } else {
                // The check needs every region located; a composite head
                // whose members break a rule has its region all the same.
                match file.check_padding() {
                    Ok(()) => PaddingCheck::Ok,
                    Err(e) if e.field().is_some_and(|f| f.name == "padding") => PaddingCheck::Invalid(e),
                    Err(_) => PaddingCheck::Skipped("a tensor's descriptor or buffers could not be located"),
                }
            }
        });
        Report {
            container_version: file.container_version(),
            flags: flag_names(file.file_flags()),
            data_buffer_alignment: file.data_buffer_alignment(),
            strict: file.options().is_strict(),
            kv: file.kv().iter().map(|e| (e.key(), e.value())).collect(),
            tensors,
            padding,
        }
    }

    /// The first problem found, in index order, then the padding: what makes
    /// the exit status 1.
    pub fn first_error(&self) -> Option<&Error> {
        let padding = match &self.padding {
            Some(PaddingCheck::Invalid(e)) => Some(e),
            _ => None,
        };
        self.tensors.iter().find_map(|t| t.error.as_ref()).or(padding)
    }
}

impl TensorInfo {
    /// What a descriptor says on its own (for a tensor that did not
    /// resolve): no buffers.
    fn from_descriptor(descriptor: &Descriptor<'_>) -> Self {
        TensorInfo {
            element_type: descriptor.element_type(),
            type_tag: descriptor.header().type_tag,
            layout: descriptor.layout(),
            shape: descriptor.shape().collect(),
            nnz: descriptor.layout_fields().nnz(),
            buffers: None,
            not_viewable: None,
        }
    }

    fn from_tensor(tensor: &Tensor<'_>) -> Self {
        TensorInfo {
            buffers: located_buffers(tensor).map(|buffers| {
                buffers
                    .iter()
                    .map(|b| BufferInfo {
                        byte_size: b.byte_size(),
                        alignment: b.alignment(),
                        offset: b.file_offset(),
                    })
                    .collect()
            }),
            not_viewable: tensor.not_viewable(),
            ..Self::from_descriptor(tensor.descriptor())
        }
    }
}

/// A resolved tensor's buffers, or `None` when they were not located: an
/// unknown layout (permissive) hides the buffer table, which is not the
/// same as a tensor with no buffers.
pub fn located_buffers<'t, 'data>(tensor: &'t Tensor<'data>) -> Option<&'t [Buffer<'data>]> {
    tensor.descriptor().buffer_handles().map(|_| tensor.buffers())
}

/// Findings the library reports for a tensor it accepts: an advisory
/// statistic that disagrees, a GPU buffer declaring less than page
/// alignment, and (permissive mode) a statistics block that strict mode
/// would reject.
pub(crate) fn warnings(tensor: &Tensor<'_>) -> Vec<String> {
    let nnz = tensor.statistics_nnz_mismatch().map(|(statistics, nnz)| {
        format!(
            "statistics nnz is {statistics}, but the descriptor's nnz is {nnz}: accepted by permissive \
             mode, which uses the descriptor's (strict mode rejects it)"
        )
    });
    let statistics = tensor.statistics_rule_violation().map(|e| {
        // The line already names the tensor: the message without its scope.
        let (text, scope) = (e.to_string(), Scope::Tensor(tensor.name().into()).to_string());
        let text = text.strip_prefix(&scope).unwrap_or(&text);
        format!("{text}: accepted by permissive mode, which keeps the advisory block (strict mode rejects it)")
    });
    let sparsity = tensor.sparsity_ratio_mismatch().map(|(stored, expected)| {
        format!(
            "statistics sparsity_ratio is {stored}, but nnz gives {expected} \
             (advisory only, metadata.md § Statistics Section)"
        )
    });
    let page = tensor
        .page_alignment_shortfall()
        .map(|shortfall| format!("{shortfall}; accepted, as a reader cannot know the writer's target"));
    nnz.into_iter().chain(statistics).chain(sparsity).chain(page).collect()
}

/// The names of the set bits, in bit order; bits the library does not name
/// appear as hex (`0x8`).
fn flag_names(flags: u32) -> Vec<String> {
    let named = file_flags::NAMES.iter().fold(0u32, |acc, (bit, _)| acc | bit);
    let mut names: Vec<String> = file_flags::NAMES
        .iter()
        .filter(|(bit, _)| flags & bit != 0)
        .map(|(_, name)| (*name).to_owned())
        .collect();
    let unnamed = flags & !named;
    if unnamed != 0 {
        names.push(format!("{unnamed:#x}"));
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_named_in_bit_order() {
        assert_eq!(flag_names(0), Vec::<String>::new());
        assert_eq!(flag_names(file_flags::HAS_INDEX_CRC32C), ["HAS_INDEX_CRC32C"]);
        assert_eq!(
            flag_names(file_flags::HAS_INDEX_CRC32C | file_flags::HAS_KV_METADATA | 0x100),
            ["HAS_KV_METADATA", "HAS_INDEX_CRC32C", "0x100"]
        );
    }

    #[test]
    fn total_bytes_sums_byte_sizes() {
        let info = TensorInfo {
            element_type: Some(ElementType::Float32),
            type_tag: 0x03,
            layout: Layout::Csc,
            shape: vec![4, 5],
            nnz: Some(5),
            buffers: Some(vec![
                BufferInfo {
                    byte_size: 20,
                    alignment: 64,
                    offset: 4096,
                },
                BufferInfo {
                    byte_size: u64::MAX,
                    alignment: 64,
                    offset: 8192,
                },
            ]),
            not_viewable: None,
        };
        assert_eq!(info.total_bytes(), u64::MAX);
    }

    #[test]
    fn first_error_prefers_tensors_then_padding() {
        let mut report = Report {
            container_version: (1, 0),
            flags: Vec::new(),
            data_buffer_alignment: 4096,
            strict: true,
            kv: Vec::new(),
            tensors: Vec::new(),
            padding: Some(PaddingCheck::Invalid(Error::NotFound { name: "padding".into() })),
        };
        assert!(matches!(report.first_error(), Some(Error::NotFound { name }) if &**name == "padding"));
        report.tensors.push(TensorReport {
            name: "A",
            data_offset: 4096,
            resolved: false,
            info: None,
            validated: true,
            error: Some(Error::NotFound { name: "A".into() }),
            warnings: Vec::new(),
        });
        assert!(matches!(report.first_error(), Some(Error::NotFound { name }) if &**name == "A"));
    }
}
