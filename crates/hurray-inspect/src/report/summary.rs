//! The summary (`FILE`, `FILE --validate`): the file's facts, its KV
//! metadata, a row per tensor and, with `--validate`, every verdict.
//! Every fact here comes from a `hurray_reader` accessor; nothing is
//! decoded in this crate.

use hurray_reader::{file_flags, BufferRole, Descriptor, ElementType, Error, HurrayFile, KvValue, Layout, Tensor};

use crate::progress::Progress;
use crate::report::header::{located_buffers, scheme_name};

/// Everything printed about one file.
///
/// The tensors are not held: [`Tensors`] resolves each again from the file
/// when it is shown (a few hundred bytes each, built and dropped), and
/// keeps only what cannot be read again cheaply, the data checks that
/// failed. A file of 1 M empty tensors (98 MB) took 959 MB to summarise
/// when every tensor's facts and table row were held at once.
#[derive(Debug)]
pub struct Report<'f, 'data> {
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
    pub tensors: Tensors<'f, 'data>,
    /// Present with `--validate`.
    pub padding: Option<PaddingCheck>,
}

/// A report's tensors, in footer index order, each built when it is asked for.
#[derive(Debug)]
pub enum Tensors<'f, 'data> {
    /// Read again from the file each time.
    File(Box<FileTensors<'f, 'data>>),
    /// Built beforehand (the renderers' tests).
    #[cfg(test)]
    List(Vec<TensorReport<'data>>),
}

/// The tensors of a file, and what [`Report::build`] found checking them.
#[derive(Debug)]
pub struct FileTensors<'f, 'data> {
    file: &'f HurrayFile<'data>,
    /// Whether the data was checked (`--validate`).
    validated: bool,
    /// The data checks that failed, by position, ascending: they cannot
    /// be read again without scanning again. At most one per tensor with
    /// data, and a tensor with data takes at least a `data_buffer_alignment`
    /// boundary (4096 bytes) of the file.
    failures: Vec<(usize, Error)>,
    /// The positions of the tensors that did not resolve, ascending.
    unresolved: Vec<usize>,
    /// With `--validate`, by position: whether the tensor's verdict is a
    /// plain `OK`, with no error, warning or note (one byte a tensor: the
    /// validation table needs only its name).
    plain: Vec<bool>,
    /// The first problem in index order (unresolved or failed).
    first_error: Option<Error>,
}

impl<'data> Tensors<'_, 'data> {
    /// How many tensors.
    pub fn len(&self) -> usize {
        match self {
            Tensors::File(t) => t.file.len(),
            #[cfg(test)]
            Tensors::List(list) => list.len(),
        }
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The tensor at `position`, resolved again (`None` past the end).
    pub fn get(&self, position: usize) -> Option<TensorReport<'data>> {
        match self {
            Tensors::File(t) => t.get(position),
            #[cfg(test)]
            Tensors::List(list) => list.get(position).cloned(),
        }
    }

    /// Every tensor, in index order, each built as it is reached.
    pub fn iter(&self) -> impl Iterator<Item = TensorReport<'data>> + '_ {
        (0..self.len()).map_while(|position| self.get(position))
    }

    /// The tensors with an error (when the data was not checked: those
    /// that did not resolve), in index order.
    pub fn failed(&self) -> Box<dyn Iterator<Item = TensorReport<'data>> + '_> {
        match self {
            Tensors::File(t) if !t.validated => Box::new(t.unresolved.iter().filter_map(|&p| t.get(p))),
            _ => Box::new(self.iter().filter(|t| t.error.is_some())),
        }
    }

    /// The name of the tensor at `position` when its `--validate` verdict
    /// is a plain `OK` (nothing else to say): its row needs nothing more.
    pub fn plain_ok(&self, position: usize) -> Option<&'data str> {
        match self {
            Tensors::File(t) if t.plain.get(position) == Some(&true) => {
                t.file.entries().get(position).map(|e| e.name())
            }
            _ => None,
        }
    }

    /// How many [`failed`](Self::failed) yields.
    pub fn failed_count(&self) -> usize {
        match self {
            Tensors::File(t) if !t.validated => t.unresolved.len(),
            _ => self.failed().count(),
        }
    }

    /// The first problem in index order.
    fn first_error(&self) -> Option<&Error> {
        match self {
            Tensors::File(t) => t.first_error.as_ref(),
            #[cfg(test)]
            Tensors::List(list) => list.iter().find_map(|t| t.error.as_ref()),
        }
    }
}

impl<'data> FileTensors<'_, 'data> {
    fn get(&self, position: usize) -> Option<TensorReport<'data>> {
        let entry = self.file.entries().get(position)?;
        let mut report = TensorReport {
            name: entry.name(),
            data_offset: entry.data_offset(),
            info: None,
            resolved: false,
            validated: self.validated,
            error: None,
            warnings: Vec::new(),
        };
        match self.file.tensor_at(position) {
            Ok(tensor) => {
                report.info = Some(TensorInfo::from_tensor(&tensor));
                report.resolved = true;
                if self.validated {
                    report.error = self
                        .failures
                        .binary_search_by_key(&position, |(p, _)| *p)
                        .ok()
                        .and_then(|i| self.failures.get(i))
                        .map(|(_, e)| e.clone());
                    report.warnings = tensor.warnings();
                }
            }
            Err(e) => {
                report.info = self
                    .file
                    .descriptor_at(position)
                    .ok()
                    .map(|d| TensorInfo::from_descriptor(&d));
                report.error = Some(e);
            }
        }
        Some(report)
    }
}

/// One tensor.
#[derive(Debug, Clone)]
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

/// Facts from a tensor's descriptor.
#[derive(Debug, Clone)]
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
    /// A quantized tensor's scheme: `per_tensor_affine`, ..., or
    /// `unknown(0x07)` for a tag the reader does not know (permissive).
    pub quantization: Option<String>,
}

/// One buffer handle, located in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferInfo {
    /// What it holds (`values`, `row_indices`, `scales`, ...).
    pub role: BufferRole,
    /// Its elements' type; `None` when unknown (an unknown type tag, a
    /// shared `[scales | zero_points]` buffer).
    pub element_type: Option<ElementType>,
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

impl<'f, 'data> Report<'f, 'data> {
    /// Reads the file's facts and resolves every tensor once (`tensor_at`),
    /// keeping which did not resolve; with `validate`, checks each
    /// tensor's data (shown by `progress`; the scans run on the threads of
    /// the file's `Options`, progress is reported from this thread),
    /// keeping the checks that failed, and in strict mode the file's
    /// padding. The rest is read again when shown ([`Tensors`]).
    pub fn build(file: &'f HurrayFile<'data>, validate: bool, progress: &mut Progress) -> Self {
        let mut tensors = FileTensors {
            file,
            validated: validate,
            failures: Vec::new(),
            unresolved: Vec::new(),
            plain: Vec::new(),
            first_error: None,
        };
        for (position, entry) in file.entries().iter().enumerate() {
            let error = match file.tensor_at(position) {
                Ok(tensor) if validate => {
                    let checked = progress.run(entry.name(), |p| tensor.validate_data_with_progress(p));
                    let plain = checked.is_ok() && tensor.not_viewable().is_none() && tensor.warnings().is_empty();
                    tensors.plain.push(plain);
                    checked.err().inspect(|e| tensors.failures.push((position, e.clone())))
                }
                Ok(_) => None,
                Err(e) => {
                    tensors.unresolved.push(position);
                    if validate {
                        tensors.plain.push(false);
                    }
                    Some(e)
                }
            };
            if tensors.first_error.is_none() {
                tensors.first_error = error;
            }
        }
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
            tensors: Tensors::File(Box::new(tensors)),
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
        self.tensors.first_error().or(padding)
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
            quantization: descriptor.quantization().map(scheme_name),
        }
    }

    fn from_tensor(tensor: &Tensor<'_>) -> Self {
        TensorInfo {
            buffers: located_buffers(tensor).map(|buffers| {
                buffers
                    .iter()
                    .map(|b| BufferInfo {
                        role: b.role(),
                        element_type: b.element_type(),
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
                    role: BufferRole::Values,
                    element_type: Some(ElementType::Float32),
                    byte_size: 20,
                    alignment: 64,
                    offset: 4096,
                },
                BufferInfo {
                    role: BufferRole::Values,
                    element_type: Some(ElementType::Float32),
                    byte_size: u64::MAX,
                    alignment: 64,
                    offset: 8192,
                },
            ]),
            not_viewable: None,
            quantization: None,
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
            tensors: Tensors::List(Vec::new()),
            padding: Some(PaddingCheck::Invalid(Error::NotFound { name: "padding".into() })),
        };
        assert!(matches!(report.first_error(), Some(Error::NotFound { name }) if &**name == "padding"));
        let Tensors::List(list) = &mut report.tensors else {
            unreachable!()
        };
        list.push(TensorReport {
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
