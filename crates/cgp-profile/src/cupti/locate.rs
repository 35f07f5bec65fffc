//! Where libcupti is: the CUPTI library the injection library loads into the program.
//!
//! Searched in order: an explicit path (the spec's key or `CGP_GATE_LIBCUPTI`; the caller passes
//! it), the environment variable `CGP_GATE_LIBCUPTI`, `CUDA_HOME` (and `CUDA_PATH`), every
//! `/usr/local/cuda*` (each with the toolkit's `extras/CUPTI/lib64`), the `nvidia-cuda-cupti`
//! Python wheel that PyTorch installs (`site-packages/nvidia/cuda_cupti/lib` for CUDA 12,
//! `nvidia/cu13/lib` for CUDA 13) in `VIRTUAL_ENV`, `CONDA_PREFIX` and the site-packages of every
//! `python3` on `PATH`, then the dynamic loader itself (`dlopen("libcupti.so")`, as a program's
//! `dlopen` would find it: `LD_LIBRARY_PATH`, ld.so's cache, the system's library folders), then
//! ldconfig's cache (`ldconfig -p`, any version: Debian's `libcupti11.8` has no `libcupti.so`),
//! and last the loader again by the versioned names CUDA 11.8 to 13 give it. The loader is asked
//! because the cache can be stale (issue 59: a libcupti-dev installed after the last `ldconfig`
//! made `doctor` say "install libcupti-dev" while `dlopen` found it).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The environment variable that names libcupti (the spec key wins over it).
pub const LIBCUPTI_ENV: &str = "CGP_GATE_LIBCUPTI";

/// No libcupti was found: every place searched, and what was wrong with an explicit one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LocateError {
    #[error(
        "CUPTI: the libcupti named by {from} ({path}) {why}; point it at a libcupti.so (e.g. $CUDA_HOME/extras/CUPTI/lib64/libcupti.so)"
    )]
    Explicit {
        from: String,
        path: PathBuf,
        why: String,
    },
    #[error(
        "CUPTI: no libcupti found; searched {}; install the CUDA toolkit's CUPTI (Debian: libcupti-dev, pip: nvidia-cuda-cupti-cu12), or set CGP_GATE_LIBCUPTI (or the spec's key) to the libcupti.so of the program's CUDA version",
        searched.join(", ")
    )]
    NotFound { searched: Vec<String> },
}

/// The file names libcupti goes by, most specific last-resort first.
fn is_libcupti(name: &str) -> bool {
    name == "libcupti.so" || name.starts_with("libcupti.so.")
}

/// How a libcupti was found (what `doctor` says beside it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// Named by the spec or `CGP_GATE_LIBCUPTI`.
    Named,
    /// In a CUDA toolkit's or a Python wheel's folder.
    Folder,
    /// By the dynamic loader; `in_cache`: whether `ldconfig -p` lists a libcupti too (a stale
    /// cache does not).
    Loader { in_cache: bool },
    /// In ldconfig's cache.
    Ldconfig,
}

/// The names the loader is asked for after ldconfig's cache: the development name first, then
/// the versioned names of the toolkits a package may install alone (13, 12, 11.8).
const LOADER_NAMES: [&str; 4] = [
    "libcupti.so",
    "libcupti.so.13",
    "libcupti.so.12",
    "libcupti.so.11.8",
];

/// The libcupti to load. `explicit` (the spec's key) wins, then `CGP_GATE_LIBCUPTI`; an explicit
/// path that is not a file is an error rather than a fall-back to a search (the user asked for it).
///
/// # Errors
/// [`LocateError`], naming every place searched.
pub fn find_libcupti(explicit: Option<&Path>) -> Result<PathBuf, LocateError> {
    locate(explicit).map(|(p, _)| p)
}

/// [`find_libcupti`], with how it was found.
///
/// # Errors
/// [`LocateError`], naming every place searched.
pub fn locate(explicit: Option<&Path>) -> Result<(PathBuf, Via), LocateError> {
    find_in(explicit, &|k| std::env::var_os(k), &ldconfig_cache, &loader_path)
}

/// [`locate`] over a given environment, ldconfig listing and dynamic loader (tests pass their own).
///
/// # Errors
/// [`LocateError`], naming every place searched.
pub fn find_in(
    explicit: Option<&Path>,
    env: &dyn Fn(&str) -> Option<OsString>,
    ldconfig: &dyn Fn() -> Option<String>,
    loader: &dyn Fn(&str) -> Result<PathBuf, String>,
) -> Result<(PathBuf, Via), LocateError> {
    let from_env = env(LIBCUPTI_ENV).filter(|v| !v.is_empty()).map(PathBuf::from);
    let chosen = match (explicit, from_env) {
        (Some(p), _) => Some((p.to_path_buf(), "the spec".to_owned())),
        (None, Some(p)) => Some((p, LIBCUPTI_ENV.to_owned())),
        (None, None) => None,
    };
    if let Some((path, from)) = chosen {
        return check_explicit(path, from).map(|p| (p, Via::Named));
    }
    let mut searched = Vec::new();
    for dir in candidate_dirs(env) {
        if let Some(found) = in_dir(&dir) {
            return Ok((found, Via::Folder));
        }
        searched.push(dir.display().to_string());
    }
    let cached = ldconfig().and_then(|text| from_ldconfig(&text));
    let mut refused = Vec::new();
    for (i, name) in LOADER_NAMES.iter().enumerate() {
        // The development name before the cache; the versioned names after it (a cache that
        // lists one is the better witness of which is installed).
        if i == 1
            && let Some(found) = &cached
        {
            return Ok((found.clone(), Via::Ldconfig));
        }
        match loader(name) {
            Ok(found) => {
                return Ok((
                    found,
                    Via::Loader {
                        in_cache: cached.is_some(),
                    },
                ));
            }
            Err(e) => refused.push(e),
        }
    }
    searched.push("ldconfig -p".to_owned());
    searched.push(format!("the dynamic loader ({})", refused.join("; ")));
    Err(LocateError::NotFound { searched })
}

/// Where the dynamic loader finds `name` for a `dlopen` of this process (which searches as the
/// profiled program's would: `LD_LIBRARY_PATH`, ld.so's cache, the system's folders): the
/// library is loaded, its file found from one of its functions (`dladdr`), and unloaded. A
/// library without CUPTI's `cuptiGetVersion` is not CUPTI.
///
/// # Errors
/// The loader's own message (`libcupti.so: cannot open shared object file: ...`).
#[cfg(target_os = "linux")]
fn loader_path(name: &str) -> Result<PathBuf, String> {
    use nix::libc;
    use std::ffi::{CStr, CString};
    use std::os::unix::ffi::OsStrExt;
    let c_name = CString::new(name).map_err(|e| e.to_string())?;
    #[expect(
        unsafe_code,
        reason = "dlopen/dlsym/dladdr/dlclose with NUL-terminated names; the handle is closed on every path and no pointer outlives it (the file name is copied first)"
    )]
    unsafe {
        let handle = libc::dlopen(c_name.as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL);
        if handle.is_null() {
            let e = libc::dlerror();
            return Err(if e.is_null() {
                format!("{name}: not found")
            } else {
                CStr::from_ptr(e).to_string_lossy().into_owned()
            });
        }
        let symbol = libc::dlsym(handle, c"cuptiGetVersion".as_ptr());
        let mut info: libc::Dl_info = std::mem::zeroed();
        let path = (!symbol.is_null() && libc::dladdr(symbol, &mut info) != 0 && !info.dli_fname.is_null())
            .then(|| {
                PathBuf::from(std::ffi::OsStr::from_bytes(
                    CStr::from_ptr(info.dli_fname).to_bytes(),
                ))
            });
        libc::dlclose(handle);
        path.ok_or_else(|| format!("{name}: the library the loader found has no cuptiGetVersion: not CUPTI"))
    }
}

#[cfg(not(target_os = "linux"))]
fn loader_path(name: &str) -> Result<PathBuf, String> {
    Err(format!("{name}: CUPTI targets run on Linux only"))
}

fn check_explicit(path: PathBuf, from: String) -> Result<PathBuf, LocateError> {
    let why = match std::fs::metadata(&path) {
        Ok(m) if m.is_file() => return Ok(path),
        Ok(m) if m.is_dir() => match in_dir(&path) {
            Some(found) => return Ok(found),
            None => "is a folder without a libcupti.so".to_owned(),
        },
        Ok(_) => "is not a regular file".to_owned(),
        Err(e) => format!("cannot be read ({e})"),
    };
    Err(LocateError::Explicit { from, path, why })
}

/// The folders searched before ldconfig, in order.
fn candidate_dirs(env: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    for key in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(v) = env(key).filter(|v| !v.is_empty()) {
            roots.push(PathBuf::from(v));
        }
    }
    roots.push(PathBuf::from("/usr/local/cuda"));
    let mut versioned: Vec<PathBuf> = std::fs::read_dir("/usr/local")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("cuda-"))
        })
        .collect();
    // The newest toolkit first (`cuda-13.0` before `cuda-12.4` before `cuda-9.2`).
    versioned.sort_by_key(|p| std::cmp::Reverse(toolkit_version(p)));
    roots.extend(versioned);
    let mut dirs = Vec::new();
    for root in roots {
        dirs.push(root.join("extras/CUPTI/lib64"));
        dirs.push(root.join("lib64"));
        dirs.push(root.join("targets/x86_64-linux/lib"));
        dirs.push(root.join("targets/sbsa-linux/lib"));
    }
    let mut site = Vec::new();
    for key in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(v) = env(key).filter(|v| !v.is_empty()) {
            site.extend(site_packages_under(Path::new(&v)));
        }
    }
    site.extend(python_site_packages(env));
    for s in site {
        dirs.push(s.join("nvidia/cu13/lib"));
        dirs.push(s.join("nvidia/cuda_cupti/lib"));
    }
    let mut seen = std::collections::HashSet::new();
    dirs.retain(|d| seen.insert(d.clone()));
    dirs
}

/// The numbers of a `/usr/local/cuda-12.4` folder's name (`[12, 4]`), compared as numbers.
fn toolkit_version(dir: &Path) -> Vec<u32> {
    dir.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix("cuda-"))
        .map(|v| v.split('.').map(|x| x.parse().unwrap_or(0)).collect())
        .unwrap_or_default()
}

/// `lib/python3.*/site-packages` under a virtualenv or conda prefix.
fn site_packages_under(prefix: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(prefix.join("lib"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("python3"))
        })
        .map(|p| p.join("site-packages"))
        .collect();
    out.sort();
    out
}

/// The site-packages folders of every `python3` on `PATH` (asked with a 10-second limit each).
fn python_site_packages(env: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    let Some(path) = env("PATH") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for dir in std::env::split_paths(&path) {
        let python = dir.join("python3");
        let Ok(real) = std::fs::canonicalize(&python) else {
            continue;
        };
        if !seen.insert(real) {
            continue;
        }
        let script = "import site,sys;print('\\n'.join(site.getsitepackages()+[site.getusersitepackages()]))";
        if let Some(text) = run_bounded(Command::new(&python).args(["-I", "-c", script])) {
            out.extend(text.lines().filter(|l| !l.is_empty()).map(PathBuf::from));
        }
    }
    out
}

/// A command's stdout, or `None` when it fails or takes over 10 seconds (then it is killed).
fn run_bounded(cmd: &mut Command) -> Option<String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(Some(_)) | Err(_) => return None,
            Ok(None) if std::time::Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let mut text = String::new();
    use std::io::Read;
    child
        .stdout
        .take()?
        .take(1 << 20)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// `libcupti.so` in `dir`, else its newest `libcupti.so.N` (the wheels ship only `.so.12`, `.so.13`).
fn in_dir(dir: &Path) -> Option<PathBuf> {
    let plain = dir.join("libcupti.so");
    if plain.is_file() {
        return Some(plain);
    }
    let mut versioned: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(is_libcupti))
        .collect();
    versioned.sort();
    versioned.pop()
}

/// `ldconfig -p`'s listing (a pipe may fill: the output is read after exit, at most 1 MiB).
fn ldconfig_cache() -> Option<String> {
    ["ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"]
        .iter()
        .find_map(|bin| run_bounded(Command::new(bin).arg("-p")))
}

/// The libcupti of an `ldconfig -p` listing (`\tlibcupti.so.11.8 (libc6,x86-64) => /lib/...`),
/// the 64-bit one, a plain `libcupti.so` before a versioned one.
pub fn from_ldconfig(text: &str) -> Option<PathBuf> {
    let mut best: Option<(bool, PathBuf)> = None;
    for line in text.lines() {
        let Some((left, path)) = line.split_once(" => ") else {
            continue;
        };
        let name = left.split_whitespace().next().unwrap_or("");
        let wide = ["x86-64", "AArch64", "64bit"].iter().any(|a| left.contains(a));
        if !is_libcupti(name) || !wide {
            continue;
        }
        let plain = name == "libcupti.so";
        let path = PathBuf::from(path.trim());
        if best.as_ref().is_none_or(|(p, _)| plain && !p) {
            best = Some((plain, path));
        }
    }
    best.map(|(_, p)| p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldconfig_listing_gives_the_64_bit_library() {
        let text = "1234 libs found in cache `/etc/ld.so.cache'\n\
            \tlibcupti.so.11.8 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcupti.so.11.8\n\
            \tlibcupti.so (libc6) => /lib/i386-linux-gnu/libcupti.so\n\
            \tlibcupti.so (libc6,x86-64) => /lib/x86_64-linux-gnu/libcupti.so\n\
            \tlibcuda.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcuda.so.1\n";
        assert_eq!(
            from_ldconfig(text),
            Some(PathBuf::from("/lib/x86_64-linux-gnu/libcupti.so"))
        );
        assert_eq!(from_ldconfig("\tlibcuda.so.1 (libc6,x86-64) => /x\n"), None);
    }

    #[test]
    fn toolkits_are_ordered_by_version_as_numbers() {
        let mut dirs =
            ["cuda-9.2", "cuda-12.10", "cuda-12.4", "cuda-13.0"].map(|d| PathBuf::from("/usr/local").join(d));
        dirs.sort_by_key(|p| std::cmp::Reverse(toolkit_version(p)));
        let names: Vec<_> = dirs
            .iter()
            .map(|d| d.file_name().unwrap().to_str().unwrap())
            .collect();
        assert_eq!(names, ["cuda-13.0", "cuda-12.10", "cuda-12.4", "cuda-9.2"]);
    }

    #[test]
    fn explicit_path_wins_and_a_wrong_one_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("libcupti.so.13");
        std::fs::write(&lib, b"x").unwrap();
        let none = |_: &str| None::<OsString>;
        let no_ld = || None;
        let no_loader = |n: &str| Err::<PathBuf, String>(format!("{n}: not here"));
        assert_eq!(
            find_in(Some(&lib), &none, &no_ld, &no_loader).unwrap(),
            (lib.clone(), Via::Named)
        );
        // A folder holding one is taken too.
        assert_eq!(
            find_in(Some(dir.path()), &none, &no_ld, &no_loader).unwrap().0,
            lib
        );
        let missing = dir.path().join("nope.so");
        let err = find_in(Some(&missing), &none, &no_ld, &no_loader).unwrap_err();
        assert!(err.to_string().contains("nope.so"), "{err}");
        // The environment variable, when the spec names none.
        let env_dir = dir.path().to_owned();
        let env = move |k: &str| (k == LIBCUPTI_ENV).then(|| env_dir.join("libcupti.so.13").into());
        assert_eq!(find_in(None, &env, &no_ld, &no_loader).unwrap().0, lib);
    }

    #[test]
    fn a_wheel_in_a_virtualenv_is_found_and_the_error_lists_every_place() {
        let venv = tempfile::tempdir().unwrap();
        let no_ld = || None;
        let no_loader = |n: &str| Err::<PathBuf, String>(format!("{n}: cannot open shared object file"));
        let env_of =
            |root: PathBuf| move |k: &str| (k == "VIRTUAL_ENV").then(|| root.clone().into_os_string());
        let env = env_of(venv.path().to_owned());
        let site = venv.path().join("lib/python3.11/site-packages");
        std::fs::create_dir_all(&site).unwrap();
        let err = find_in(None, &env, &no_ld, &no_loader).unwrap_err().to_string();
        assert!(
            err.contains("ldconfig -p")
                && err.contains("the dynamic loader (libcupti.so: cannot open shared object file")
                && err.contains("CGP_GATE_LIBCUPTI"),
            "{err}"
        );
        let lib_dir = site.join("nvidia/cuda_cupti/lib");
        for place in [&lib_dir, &site.join("nvidia/cu13/lib")] {
            assert!(err.contains(&place.display().to_string()), "{err}");
        }
        std::fs::create_dir_all(&lib_dir).unwrap();
        std::fs::write(lib_dir.join("libcupti.so.12"), b"x").unwrap();
        assert_eq!(
            find_in(None, &env, &no_ld, &no_loader).unwrap().0,
            lib_dir.join("libcupti.so.12")
        );
        // After the folders: the loader's `libcupti.so`, then ldconfig's cache, then the loader's
        // versioned names.
        let ld = || Some("\tlibcupti.so.11.8 (libc6,x86-64) => /usr/lib/libcupti.so.11.8\n".into());
        let empty = tempfile::tempdir().unwrap();
        let env = env_of(empty.path().to_owned());
        let toolkit = |found: &Path| found.starts_with("/usr/local");
        let found = find_in(None, &env, &ld, &no_loader).unwrap();
        // A CUDA toolkit on this machine comes before ldconfig.
        assert!(
            found == (PathBuf::from("/usr/lib/libcupti.so.11.8"), Via::Ldconfig) || toolkit(&found.0),
            "{found:?}"
        );
        let dev = |n: &str| match n {
            "libcupti.so" => Ok(PathBuf::from("/opt/cupti/libcupti.so")),
            _ => Err(format!("{n}: not here")),
        };
        let found = find_in(None, &env, &ld, &dev).unwrap();
        assert!(
            found
                == (
                    PathBuf::from("/opt/cupti/libcupti.so"),
                    Via::Loader { in_cache: true }
                )
                || toolkit(&found.0),
            "{found:?}"
        );
        // A stale cache (it lists none): the loader finds a versioned one, and says the cache
        // did not list it.
        let versioned = |n: &str| match n {
            "libcupti.so.12" => Ok(PathBuf::from("/usr/lib/x86_64-linux-gnu/libcupti.so.12")),
            _ => Err(format!("{n}: not here")),
        };
        let found = find_in(None, &env, &no_ld, &versioned).unwrap();
        assert!(
            found
                == (
                    PathBuf::from("/usr/lib/x86_64-linux-gnu/libcupti.so.12"),
                    Via::Loader { in_cache: false }
                )
                || toolkit(&found.0),
            "{found:?}"
        );
    }

    /// The real loader of this process: it finds this machine's libcupti where one is installed
    /// (Debian's libcupti-dev, .ci/setup), and refuses a library that is not CUPTI.
    #[test]
    fn the_real_loader_finds_libcupti_and_refuses_another_library() {
        if let Ok(p) = loader_path("libcupti.so") {
            assert!(
                p.is_absolute()
                    && p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("libcupti.so")),
                "{p:?}"
            );
        }
        let err = loader_path("libm.so.6").unwrap_err();
        assert!(err.contains("not CUPTI"), "{err}");
        let err = loader_path("libcupti-none.so").unwrap_err();
        assert!(err.contains("libcupti-none.so"), "{err}");
    }
}
