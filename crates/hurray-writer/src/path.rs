//! Atomic path-based writing: build the file under a temporary name in the
//! target's directory, rename it into place only once complete.

use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use crate::error::{Error, Result};
use crate::writer::{FileWriter, WriterOptions};

/// A [`FileWriter`] over a temporary file next to `target`.
///
/// [`PathWriter::commit`] completes the file and renames it to the target
/// path. Dropping the writer without committing (an error returned early, a
/// panic) deletes the temporary file, so the target path never holds a
/// partial file. Long zero runs become holes in the temporary file.
///
/// Derefs to the inner [`FileWriter`].
#[derive(Debug)]
pub struct PathWriter {
    writer: FileWriter<NamedTempFile>,
    target: PathBuf,
    sync: bool,
}

impl PathWriter {
    /// Creates the temporary file in the directory of `path` (the current
    /// directory for a bare file name).
    ///
    /// # Errors
    /// I/O errors creating the file; option errors of [`FileWriter::new`].
    pub fn create(path: impl AsRef<Path>, options: WriterOptions) -> Result<Self> {
        let target = path.as_ref().to_path_buf();
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(".hurray-").suffix(".tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o644));
        }
        let tmp = builder.tempfile_in(dir)?;
        let sync = options.get_sync_on_commit();
        Ok(Self {
            writer: FileWriter::new(tmp, options)?,
            target,
            sync,
        })
    }

    /// The path the file will have after [`PathWriter::commit`].
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Completes the file (KV, index, trailer), optionally `fsync`s it, and
    /// renames it to the target path, replacing any file there.
    ///
    /// # Errors
    /// Any error of [`FileWriter::finish`]; I/O errors of sync or rename.
    /// On error the temporary file is removed and the target is untouched.
    pub fn commit(self) -> Result<()> {
        let tmp = self.writer.finish()?;
        if self.sync {
            tmp.as_file().sync_all()?;
        }
        tmp.persist(&self.target).map_err(|e| Error::Io(e.error))?;
        Ok(())
    }
}

impl Deref for PathWriter {
    type Target = FileWriter<NamedTempFile>;

    fn deref(&self) -> &Self::Target {
        &self.writer
    }
}

impl DerefMut for PathWriter {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.writer
    }
}

/// Writes a Hurray file at `path` atomically: `build` fills a writer over a
/// temporary file; if it returns `Ok`, the file is completed and renamed into
/// place. If `build` fails or panics, or completing fails, nothing appears at
/// `path`.
///
/// # Errors
/// The error of `build`, or of [`PathWriter::create`] / [`PathWriter::commit`].
pub fn write_file<F>(path: impl AsRef<Path>, options: WriterOptions, build: F) -> Result<()>
where
    F: FnOnce(&mut FileWriter<NamedTempFile>) -> Result<()>,
{
    let mut w = PathWriter::create(path, options)?;
    build(&mut w)?;
    w.commit()
}
