//! Opening a path for [`MappedFile::open`](crate::MappedFile::open) and
//! [`AlignedBytes::read`](crate::AlignedBytes::read): only a regular file
//! is accepted, and nothing waits. A plain `open` of a FIFO blocks until a
//! writer comes (forever, for a FIFO nobody writes to); a character device
//! may never end (`/dev/zero`). On Unix the path is opened with
//! `O_NONBLOCK`, which returns at once whatever it names, and the open file
//! is then checked with `fstat` (the same file, not a second look at the
//! path); the flag is cleared again before a regular file is read.

use std::fs::{File, Metadata};
use std::io::ErrorKind;
use std::path::Path;

use crate::error::{io_error, Result};

/// Opens `path` for reading and returns it with its metadata when it is a
/// regular file.
///
/// # Errors
/// [`Error::Io`](crate::Error::Io): `PATH: cannot open: ...` when it cannot
/// be opened; `PATH: {what}: is a directory` (kind `IsADirectory`) or
/// `PATH: {what}: not a regular file (a FIFO)` (a socket, a character
/// device, a block device; kind `InvalidInput`) when it is not a regular
/// file, `what` being what the caller would have done (`cannot map`,
/// `cannot read`).
pub(crate) fn open_regular(path: &Path, what: &str) -> Result<(File, Metadata)> {
    let file = open_nonblocking(path).map_err(|e| io_error(path, "cannot open", &e))?;
    let metadata = file.metadata().map_err(|e| io_error(path, "cannot stat", &e))?;
    if metadata.is_dir() {
        let e = std::io::Error::new(ErrorKind::IsADirectory, "is a directory");
        return Err(io_error(path, what, &e));
    }
    if !metadata.is_file() {
        let message = format!("not a regular file ({})", kind_of(&metadata));
        let e = std::io::Error::new(ErrorKind::InvalidInput, message);
        return Err(io_error(path, what, &e));
    }
    blocking(&file).map_err(|e| io_error(path, "cannot open", &e))?;
    Ok((file, metadata))
}

/// What a path that is neither a regular file nor a directory is.
fn kind_of(metadata: &Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = metadata.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
    }
    let _ = metadata;
    "a special file"
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(path, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC, Mode::empty())?;
    Ok(File::from(fd))
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

/// Clears `O_NONBLOCK` (it changes nothing for a regular file on Linux,
/// but a file system may honour it).
#[cfg(unix)]
fn blocking(file: &File) -> std::io::Result<()> {
    use rustix::fs::OFlags;
    let flags = rustix::fs::fcntl_getfl(file)?;
    rustix::fs::fcntl_setfl(file, flags.difference(OFlags::NONBLOCK))?;
    Ok(())
}

#[cfg(not(unix))]
fn blocking(_: &File) -> std::io::Result<()> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::Error;

    fn refused(path: &Path) -> (ErrorKind, String) {
        match open_regular(path, "cannot map") {
            Err(Error::Io { kind, message }) => (kind, message.into()),
            Ok(_) => panic!("{}: opened", path.display()),
            Err(e) => panic!("{}: {e}", path.display()),
        }
    }

    /// A FIFO with no writer: a plain open would block forever.
    #[test]
    fn a_fifo_is_refused_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("f.hry");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, Mode::from_raw_mode(0o600)).unwrap();
        let (kind, message) = refused(&fifo);
        assert_eq!(kind, ErrorKind::InvalidInput);
        assert_eq!(
            message,
            format!("{}: cannot map: not a regular file (a FIFO)", fifo.display())
        );
    }

    #[test]
    fn devices_sockets_and_directories_are_refused() {
        let (kind, message) = refused(Path::new("/dev/null"));
        assert_eq!(kind, ErrorKind::InvalidInput);
        assert_eq!(
            message,
            "/dev/null: cannot map: not a regular file (a character device)"
        );
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("s");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        // A socket cannot be opened at all: the open fails (ENXIO).
        let (_, message) = match open_regular(&socket, "cannot map") {
            Err(Error::Io { kind, message }) => (kind, String::from(message)),
            other => panic!("{other:?}"),
        };
        assert!(
            message.starts_with(&format!("{}: cannot open: ", socket.display())),
            "{message}"
        );
        let (kind, message) = refused(dir.path());
        assert_eq!(kind, ErrorKind::IsADirectory);
        assert_eq!(message, format!("{}: cannot map: is a directory", dir.path().display()));
    }

    #[test]
    fn a_regular_file_opens_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x");
        std::fs::write(&path, b"abc").unwrap();
        let (file, metadata) = open_regular(&path, "cannot map").unwrap();
        assert_eq!(metadata.len(), 3);
        let flags = rustix::fs::fcntl_getfl(&file).unwrap();
        assert!(!flags.contains(rustix::fs::OFlags::NONBLOCK));
    }

    use rustix::fs::Mode;
}
