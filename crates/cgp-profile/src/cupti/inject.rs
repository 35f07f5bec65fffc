//! The injection library (`src/cupti/inject.c`): where it is on disk, and what the program's
//! environment needs for the CUDA driver to load it.
//!
//! How it travels: build.rs compiles inject.c into a shared object and this binary embeds its
//! bytes; at first use they are written (atomically) to a cache folder named by their hash and
//! loaded from there. Why embedded: `cargo install` and `pip install` (maturin, `bindings =
//! "bin"`) ship exactly one file, the binary, so a library beside it would be lost, and building
//! it on first use would need a C compiler on every GPU host. Embedded, it needs no extra step,
//! and the hash in the folder name means two cgp-gate versions never load each other's library.
//! It needs no CUDA at build time: it loads libcupti itself, with `dlopen`, from the path in
//! [`LIBRARY_ENV`].

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

/// The variable the CUDA driver reads: the library it loads and whose `InitializeInjection` it
/// calls when the program initialises CUDA.
pub const INJECTION_ENV: &str = "CUDA_INJECTION64_PATH";
/// The libcupti the library loads (an absolute path: [`crate::cupti::locate::find_libcupti`]).
pub const LIBRARY_ENV: &str = "CGP_GATE_CUPTI_LIBRARY";
/// The trace file the library writes (docs/cupti.md, "Trace file format").
pub const OUT_ENV: &str = "CGP_GATE_CUPTI_OUT";
/// The run's nonce: 32 hex digits cgp-gate draws per run, which the library copies into the
/// trace's header and then overwrites in the environment (docs/cupti.md, "What the program under
/// test can forge"). A trace without this run's nonce is refused.
pub const NONCE_ENV: &str = "CGP_GATE_CUPTI_NONCE";
/// The file name of the library in the cache folder.
pub const FILE_NAME: &str = "libcgp_gate_cupti.so";

/// The library as build.rs compiled it (empty where it cannot be built: not Linux).
static LIBRARY: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libcgp_gate_cupti.so"));

/// Why the injection library cannot be made ready.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InjectError {
    #[error(
        "CUPTI: this cgp-gate was built without its CUPTI injection library (it is built for Linux only); use `profiler: ncu`, or a Linux build of cgp-gate"
    )]
    Unsupported,
    #[error(
        "CUPTI: cannot write the injection library to {path}: {message}; set XDG_CACHE_HOME to a writable folder"
    )]
    Cache { path: PathBuf, message: String },
}

/// The embedded library's bytes (empty when this build has none).
pub fn library_bytes() -> &'static [u8] {
    LIBRARY
}

/// The first 16 hex digits of the library's SHA-256: its cache folder's name.
pub fn library_hash() -> String {
    let digest = Sha256::digest(LIBRARY);
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// The path of the injection library, ready to load: written at first use to
/// `$XDG_CACHE_HOME/cgp-gate/cupti/<hash>/libcgp_gate_cupti.so` (or `~/.cache/...`), or, where
/// neither can be written, to a new private temporary folder (kept: the program loads it after
/// this function returns). A file already there with the same bytes is used as it is; one with
/// other bytes (damaged) is replaced atomically.
///
/// # Errors
/// [`InjectError`].
pub fn injection_library() -> Result<PathBuf, InjectError> {
    static READY: OnceLock<Result<PathBuf, InjectError>> = OnceLock::new();
    READY
        .get_or_init(|| {
            let home = std::env::var_os("HOME").map(PathBuf::from);
            let xdg = std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from);
            ready_in(cache_root(xdg, home).as_deref())
        })
        .clone()
}

/// `cgp-gate/cupti` under `XDG_CACHE_HOME` (when absolute, as the XDG spec requires) or
/// `~/.cache`.
pub fn cache_root(xdg: Option<PathBuf>, home: Option<PathBuf>) -> Option<PathBuf> {
    let base = xdg
        .filter(|p| p.is_absolute())
        .or_else(|| home.filter(|p| p.is_absolute()).map(|h| h.join(".cache")))?;
    Some(base.join("cgp-gate").join("cupti"))
}

/// Write the library under `root` (or a private temporary folder when that fails) and return
/// its path.
///
/// # Errors
/// [`InjectError`].
pub fn ready_in(root: Option<&Path>) -> Result<PathBuf, InjectError> {
    if LIBRARY.is_empty() {
        return Err(InjectError::Unsupported);
    }
    let first = root.map(|r| install(&r.join(library_hash())));
    match first {
        Some(Ok(path)) => Ok(path),
        first => {
            let dir = tempfile::Builder::new()
                .prefix("cgp-gate-cupti-")
                .tempdir()
                .map_err(|e| InjectError::Cache {
                    path: std::env::temp_dir(),
                    message: e.to_string(),
                })?;
            // Kept: the program under test loads the library after this returns.
            let dir = dir.keep();
            install(&dir).map_err(|e| match first {
                Some(Err(cache)) => InjectError::Cache {
                    path: dir.clone(),
                    message: format!("{e}; and before that: {cache}"),
                },
                _ => e,
            })
        }
    }
}

fn install(dir: &Path) -> Result<PathBuf, InjectError> {
    let path = dir.join(FILE_NAME);
    // The cache writes through no link (issue 44): a link planted at the library's path (or at
    // its folder) would have the library written over the file it points at. Refused here, so
    // `ready_in` falls back to a new private folder.
    for p in [dir, path.as_path()] {
        if std::fs::symlink_metadata(p).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            return Err(InjectError::Cache {
                path: p.to_path_buf(),
                message:
                    "a symbolic link or special file is there; the cache writes through no link (remove it)"
                        .into(),
            });
        }
    }
    if std::fs::read(&path).is_ok_and(|b| b == LIBRARY) {
        return Ok(path);
    }
    let fail = |message: String| InjectError::Cache {
        path: path.clone(),
        message,
    };
    std::fs::create_dir_all(dir).map_err(|e| fail(e.to_string()))?;
    crate::foundation::fsutil::write_atomic(&path, LIBRARY).map_err(|e| fail(e.to_string()))?;
    Ok(path)
}

/// A fresh nonce for one run: 16 bytes of the kernel's random source, in hex. The program under
/// test runs in another process and cannot predict it.
///
/// # Errors
/// When /dev/urandom cannot be read.
pub fn new_nonce() -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(crate::foundation::units::hex(&bytes))
}

/// The variables to add to the program's environment: [`INJECTION_ENV`] (the driver loads
/// `library`), [`LIBRARY_ENV`] (the library loads `libcupti`), [`OUT_ENV`] (it writes
/// `out_file`) and [`NONCE_ENV`] (`nonce`, which it copies into the trace's header). `out_file` must not exist yet: the first process of the program that initialises
/// CUDA takes that name, and any other (a child that inherited the environment) writes
/// `<out_file>.<pid>` beside it (docs/cupti.md).
///
/// Relative paths are made absolute (against the current directory), since the program may
/// change its own.
pub fn run_environment(
    library: &Path,
    libcupti: &Path,
    out_file: &Path,
    nonce: &str,
) -> Vec<(OsString, OsString)> {
    let abs = |p: &Path| {
        std::path::absolute(p)
            .unwrap_or_else(|_| p.to_path_buf())
            .into_os_string()
    };
    vec![
        (INJECTION_ENV.into(), abs(library)),
        (LIBRARY_ENV.into(), abs(libcupti)),
        (OUT_ENV.into(), abs(out_file)),
        (NONCE_ENV.into(), nonce.into()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_library_is_written_once_per_hash_and_repaired_when_damaged() {
        let root = tempfile::tempdir().unwrap();
        let path = ready_in(Some(root.path())).unwrap();
        assert_eq!(path, root.path().join(library_hash()).join(FILE_NAME));
        assert_eq!(std::fs::read(&path).unwrap(), LIBRARY);
        // A shared object: ELF magic.
        assert_eq!(&LIBRARY[..4], b"\x7fELF");
        std::fs::write(&path, b"damaged").unwrap();
        assert_eq!(ready_in(Some(root.path())).unwrap(), path);
        assert_eq!(std::fs::read(&path).unwrap(), LIBRARY);
    }

    #[test]
    fn an_unwritable_cache_falls_back_to_a_private_temporary_folder() {
        let root = tempfile::tempdir().unwrap();
        let blocker = root.path().join("file");
        std::fs::write(&blocker, b"not a folder").unwrap();
        let path = ready_in(Some(&blocker)).unwrap();
        assert!(path.starts_with(std::env::temp_dir()), "{path:?}");
        assert_eq!(std::fs::read(&path).unwrap(), LIBRARY);
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_link_at_the_library_path_is_not_written_through() {
        let root = tempfile::tempdir().unwrap();
        let user = root.path().join("user-file");
        std::fs::write(&user, b"the user's own data").unwrap();
        let dir = root.path().join("cache").join(library_hash());
        std::fs::create_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink(&user, dir.join(FILE_NAME)).unwrap();
        let path = ready_in(Some(&root.path().join("cache"))).unwrap();
        assert_eq!(std::fs::read(&user).unwrap(), b"the user's own data");
        assert!(
            path.starts_with(std::env::temp_dir()) && !path.starts_with(root.path()),
            "{path:?}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), LIBRARY);
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[test]
    fn nonces_are_32_hex_digits_and_differ() {
        let a = new_nonce().unwrap();
        let b = new_nonce().unwrap();
        assert_eq!(a.len(), 32);
        assert!(
            a.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()),
            "{a}"
        );
        assert_ne!(a, b);
    }

    #[test]
    fn cache_root_follows_xdg_then_home() {
        let xdg = Some(PathBuf::from("/x"));
        let home = Some(PathBuf::from("/h"));
        assert_eq!(
            cache_root(xdg, home.clone()),
            Some(PathBuf::from("/x/cgp-gate/cupti"))
        );
        assert_eq!(
            cache_root(Some(PathBuf::from("rel")), home),
            Some(PathBuf::from("/h/.cache/cgp-gate/cupti"))
        );
        assert_eq!(cache_root(None, None), None);
    }

    #[test]
    fn run_environment_names_the_library_libcupti_and_the_file() {
        let env = run_environment(
            Path::new("/c/lib.so"),
            Path::new("/l/libcupti.so"),
            Path::new("/o/0.cupti"),
            "00112233445566778899aabbccddeeff",
        );
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        assert_eq!(get("CUDA_INJECTION64_PATH"), Some("/c/lib.so".into()));
        assert_eq!(get("CGP_GATE_CUPTI_LIBRARY"), Some("/l/libcupti.so".into()));
        assert_eq!(get("CGP_GATE_CUPTI_OUT"), Some("/o/0.cupti".into()));
        assert_eq!(
            get("CGP_GATE_CUPTI_NONCE"),
            Some("00112233445566778899aabbccddeeff".into())
        );
        let rel = run_environment(Path::new("a.so"), Path::new("b.so"), Path::new("0.cupti"), "n");
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(rel[2].1, cwd.join("0.cupti").into_os_string());
    }
}
