//! The SASS cache: a hash of each profiled kernel's machine code, so that `check` can skip the
//! kernels whose code did not change since the baseline (docs/sass-cache.md).
//!
//! `cuobjdump -sass <executable>` (an argv, never a shell string) prints the SASS of every kernel
//! function in the file's fatbinary; [`split`] cuts it per function and drops what changes
//! without the code changing (instruction addresses, the file's header), and [`kernel_hash`]
//! hashes a kernel's SASS together with the target's spec entry, the GPU fingerprint key and
//! cgp-gate's version (`salt`), so that a change to any of them profiles again.
//!
//! What the hash cannot see: the input data, driver or firmware changes outside the fingerprint,
//! and launch parameters computed at run time (grid and block size live in host code).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

use crate::spec::{Size, Target};

/// The most `cuobjdump -sass` output read from one file (a larger dump is refused, and its
/// kernels are profiled).
pub const MAX_DUMP_BYTES: u64 = 256 * 1024 * 1024;

/// The reason of a skipped row.
pub const SAME_SASS_REASON: &str = "unchanged (same machine code)";

/// Run `cuobjdump -sass` on `file` and return its output.
///
/// # Errors
/// A message when cuobjdump is missing, fails (no fatbinary, JIT-only PTX), or prints too much.
pub fn dump(cuobjdump: &Path, file: &Path) -> Result<String, String> {
    let mut child = Command::new(cuobjdump)
        .arg("-sass")
        .arg(file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run `{}`: {e}", cuobjdump.display()))?;
    let mut out = Vec::new();
    let read = child
        .stdout
        .take()
        .map(|s| s.take(MAX_DUMP_BYTES + 1).read_to_end(&mut out));
    let mut err = Vec::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = (&mut e).take(64 * 1024).read_to_end(&mut err);
    }
    if out.len() as u64 > MAX_DUMP_BYTES {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!(
            "`cuobjdump -sass {}` printed more than {MAX_DUMP_BYTES} bytes",
            file.display()
        ));
    }
    let status = child
        .wait()
        .map_err(|e| format!("cuobjdump on {}: {e}", file.display()))?;
    if let Some(Err(e)) = read {
        return Err(format!(
            "cannot read cuobjdump's output for {}: {e}",
            file.display()
        ));
    }
    if !status.success() {
        return Err(format!(
            "`cuobjdump -sass {}` failed ({status}): {}",
            file.display(),
            String::from_utf8_lossy(&err).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Cut `cuobjdump -sass` output per kernel function: (function name as cuobjdump prints it,
/// mangled) -> its normalised SASS, one instruction per line. A function that appears in
/// several cubins (one per architecture) gets their SASS concatenated in the order printed.
///
/// Normalised: the `/*0040*/` address comments and the `/* 0x... */` encoding comments are
/// dropped (the instruction text stays, so a change of instruction, operand, predicate or
/// branch target changes the hash), and so are the per-file headers (`Fatbin elf code`,
/// `code version`, `identifier = file.cu`), which change when another part of the file does.
pub fn split(text: &str) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix("Function :") {
            let name = name.trim().to_owned();
            out.entry(name.clone()).or_default();
            current = Some(name);
            continue;
        }
        if t.starts_with("Fatbin ") || t.starts_with("code for ") || t.starts_with("==") {
            current = None;
            continue;
        }
        let Some(name) = &current else { continue };
        let code = strip_comments(t);
        if code.is_empty() || code.starts_with(".headerflags") || code.chars().all(|c| c == '.') {
            continue;
        }
        let body = out.entry(name.clone()).or_default();
        body.push_str(&code);
        body.push('\n');
    }
    out
}

/// An instruction line without its `/* ... */` comments, whitespace collapsed.
fn strip_comments(line: &str) -> String {
    let mut s = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(i) = rest.find("/*") {
        s.push_str(&rest[..i]);
        match rest[i + 2..].find("*/") {
            Some(j) => rest = &rest[i + 2 + j + 2..],
            None => {
                rest = "";
            }
        }
    }
    s.push_str(rest);
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The bare function name of a kernel as ncu names it (`vector_add(const float *, int)`,
/// `void ns::k<int>(float*)`, `vector_add`): without return type, namespace, template
/// arguments and parameters.
pub fn base_name(kernel: &str) -> &str {
    let no_args = kernel.split('(').next().unwrap_or(kernel).trim();
    let no_tmpl = no_args.split('<').next().unwrap_or(no_args).trim();
    let last = no_tmpl.rsplit("::").next().unwrap_or(no_tmpl);
    last.rsplit(' ').next().unwrap_or(last)
}

/// Whether the SASS function `symbol` (mangled, as cuobjdump prints it) is the kernel ncu calls
/// `kernel`: the same name (`extern "C"`), or an Itanium-mangled name holding `<len><base>`.
pub fn symbol_matches(symbol: &str, kernel: &str) -> bool {
    let base = base_name(kernel);
    if base.is_empty() {
        return false;
    }
    if symbol == base || symbol == kernel {
        return true;
    }
    symbol.starts_with("_Z") && symbol.contains(&format!("{}{}", base.len(), base))
}

/// What a kernel's hash depends on besides its SASS: the target's spec entry (command, the size,
/// metrics and thresholds), the GPU fingerprint key and this cgp-gate's version.
pub fn salt(target: &Target, size: &Size, gpu_key: &str) -> String {
    format!(
        "cgp-gate {}\ngpu {gpu_key}\ntarget {}\ncommand {:?}\ncwd {:?}\nenv {:?}\nsize {}\nmetrics {:?}\nkernel {:?}\nnvtx {:?}\nlaunches {:?} {:?}\n",
        env!("CARGO_PKG_VERSION"),
        target.name,
        target.command,
        target.cwd,
        target.env,
        size.key(),
        target.metrics,
        target.kernel,
        target.nvtx,
        target.launch_skip,
        target.launch_count,
    ) + &format!("sass {:?}\n", target.sass)
}

/// SHA-256 (hex) of `salt` and the SASS of every function matching `kernel`; `None` when no
/// function of the dump matches (the kernel is then always profiled).
pub fn kernel_hash(functions: &BTreeMap<String, String>, kernel: &str, salt: &str) -> Option<String> {
    let matched: Vec<(&String, &String)> = functions
        .iter()
        .filter(|(sym, body)| !body.is_empty() && symbol_matches(sym, kernel))
        .collect();
    if matched.is_empty() {
        return None;
    }
    let mut h = Sha256::new();
    h.update(salt.as_bytes());
    for (sym, body) in matched {
        h.update(b"\0function ");
        h.update(sym.as_bytes());
        h.update(b"\n");
        h.update(body.as_bytes());
    }
    Some(crate::foundation::units::hex(&h.finalize()))
}

/// The executable a target runs: `command[0]`, relative to the spec's directory when it holds a
/// `/`, else looked up on `PATH`.
pub fn executable(target: &Target, base_dir: &Path) -> Option<PathBuf> {
    let first = target.command.first()?;
    if first.contains('{') {
        return None;
    }
    let p = Path::new(first);
    if p.is_absolute() {
        return Some(p.to_path_buf());
    }
    if first.contains('/') {
        // `components` drops the inner `.`s: `./build/app`, not `././build/app`.
        return Some(base_dir.join(p).components().collect());
    }
    // The one PATH lookup (an executable file, as the OS would run it).
    crate::ncu::runner::find_executable(first, std::env::var_os("PATH").as_deref())
}

/// The interpreter a target runs (`python3`, `bash`, ...), whose executable holds no device code:
/// its kernels come from libraries loaded at run time (docs/sass-cache.md, "Programs whose device
/// code is loaded at run time"). `None` for a compiled program.
pub fn interpreter(target: &Target) -> Option<&str> {
    let first = target.command.first()?;
    crate::foundation::program::interpreter(first).map(|_| first.as_str())
}

/// The cuobjdump to use: `$CGP_GATE_CUOBJDUMP`, else `cuobjdump` on `PATH`.
pub fn cuobjdump() -> PathBuf {
    std::env::var_os("CGP_GATE_CUOBJDUMP")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("cuobjdump"), PathBuf::from)
}

/// The most bytes of an executable or library read to find the libraries it names.
pub const MAX_ELF_BYTES: u64 = 2 * 1024 * 1024 * 1024;

/// The most shared libraries dumped for one target (the executable's, and theirs, in turn).
pub const MAX_LIBRARIES: usize = 64;

/// What an ELF file's dynamic section names: its `DT_NEEDED` libraries, and the directories of
/// its `DT_RUNPATH` (or, without one, `DT_RPATH`), `$ORIGIN` not yet expanded. Empty for a
/// static executable.
///
/// # Errors
/// Not a 64-bit ELF file, or a damaged one.
pub fn dynamic_needs(data: &[u8]) -> Result<(Vec<String>, Vec<String>), String> {
    use object::read::elf::{Dyn as _, ElfFile64};
    let elf =
        ElfFile64::<object::Endianness>::parse(data).map_err(|e| format!("not a 64-bit ELF file: {e}"))?;
    let endian = elf.endian();
    let sections = elf.elf_section_table();
    let Some((dynamic, link)) = sections
        .dynamic(endian, data)
        .map_err(|e| format!("damaged dynamic section: {e}"))?
    else {
        return Ok((Vec::new(), Vec::new()));
    };
    let strings = sections
        .strings(endian, data, link)
        .map_err(|e| format!("damaged dynamic string table: {e}"))?;
    let (mut needed, mut runpath, mut rpath) = (Vec::new(), Vec::new(), Vec::new());
    for d in dynamic {
        let Some(tag) = d.tag32(endian) else { continue };
        let list = match tag {
            object::elf::DT_NEEDED => &mut needed,
            object::elf::DT_RUNPATH => &mut runpath,
            object::elf::DT_RPATH => &mut rpath,
            _ => continue,
        };
        let text = d
            .string(endian, strings)
            .map_err(|e| format!("damaged dynamic string: {e}"))?;
        let text = String::from_utf8_lossy(text).into_owned();
        if tag == object::elf::DT_NEEDED {
            list.push(text);
        } else {
            list.extend(text.split(':').filter(|p| !p.is_empty()).map(str::to_owned));
        }
    }
    Ok((needed, if runpath.is_empty() { rpath } else { runpath }))
}

fn read_elf(path: &Path) -> Result<Vec<u8>, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let mut data = Vec::new();
    f.take(MAX_ELF_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if data.len() as u64 > MAX_ELF_BYTES {
        return Err(format!("{} is larger than {MAX_ELF_BYTES} bytes", path.display()));
    }
    Ok(data)
}

/// The shared libraries `exe` names (and those they name, up to [`MAX_LIBRARIES`]) that are
/// found in its run path (`$ORIGIN` expanded) or in `LD_LIBRARY_PATH` (the target's `env:`,
/// else this process's). Libraries found only in the system's default directories (libc,
/// the CUDA runtime, cuBLAS as installed) are not listed: their dumps are large and their
/// kernels are not the project's, so those kernels have no hash and are always profiled.
pub fn shared_libraries(exe: &Path, env: &BTreeMap<String, String>) -> Vec<PathBuf> {
    let ld_path: Vec<PathBuf> = match env.get("LD_LIBRARY_PATH") {
        Some(v) => std::env::split_paths(v).collect(),
        None => std::env::var_os("LD_LIBRARY_PATH")
            .map(|v| std::env::split_paths(&v).collect())
            .unwrap_or_default(),
    };
    let mut found: Vec<PathBuf> = Vec::new();
    let mut queue: Vec<PathBuf> = vec![exe.to_path_buf()];
    let mut seen_names: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    while let Some(file) = queue.pop() {
        let Ok(data) = read_elf(&file) else { continue };
        let Ok((needed, run_path)) = dynamic_needs(&data) else {
            continue;
        };
        let origin = file
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let origin = origin.to_string_lossy().into_owned();
        let dirs: Vec<PathBuf> = run_path
            .iter()
            .map(|d| PathBuf::from(d.replace("${ORIGIN}", &origin).replace("$ORIGIN", &origin)))
            .chain(ld_path.iter().cloned())
            .filter(|d| !d.as_os_str().is_empty())
            .collect();
        for name in needed {
            if !seen_names.insert(name.clone()) || found.len() >= MAX_LIBRARIES {
                continue;
            }
            let candidate = if name.contains('/') {
                Some(PathBuf::from(&name))
            } else {
                dirs.iter().map(|d| d.join(&name)).find(|c| c.is_file())
            };
            if let Some(c) = candidate {
                found.push(c.clone());
                queue.push(c);
            }
        }
    }
    found
}

/// The files whose SASS a target's kernels are hashed from: the spec's `sass:` paths, else
/// the executable and the shared libraries it names ([`shared_libraries`]).
///
/// # Errors
/// No executable.
pub fn files_of(target: &Target, base_dir: &Path) -> Result<(Vec<PathBuf>, bool), String> {
    if !target.sass.is_empty() {
        return Ok((target.sass.clone(), true));
    }
    if let Some(program) = interpreter(target) {
        return Err(format!(
            "`{program}` is an interpreter: the device code of its kernels is in the libraries the \
             program loads at run time (PyTorch, cuBLAS), which the cache does not hash; name the \
             files that hold your own kernels with `sass:` to use it"
        ));
    }
    let exe = executable(target, base_dir)
        .ok_or_else(|| format!("no executable found for target `{}`", target.name))?;
    if !exe.is_file() {
        return Err(format!("{} is not there (build it first)", exe.display()));
    }
    let mut files = vec![exe.clone()];
    files.extend(shared_libraries(&exe, &target.env));
    Ok((files, false))
}

/// The SASS functions of a target's files ([`files_of`]), or why they cannot be read. A
/// function found in several files gets all their SASS. A library that cuobjdump cannot read
/// (no device code) adds nothing: kernels found nowhere have no hash and are always profiled.
///
/// # Errors
/// No executable, or cuobjdump failed on it or on a file the spec's `sass:` names.
pub fn functions_of(target: &Target, base_dir: &Path) -> Result<BTreeMap<String, String>, String> {
    let (files, all_required) = files_of(target, base_dir)?;
    let tool = cuobjdump();
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (i, file) in files.iter().enumerate() {
        let text = match dump(&tool, file) {
            Ok(t) => t,
            Err(e) if all_required || i == 0 => return Err(e),
            Err(_) => continue,
        };
        for (name, body) in split(&text) {
            let into = out.entry(name).or_default();
            into.push_str(&body);
        }
    }
    Ok(out)
}

/// The hashes of `kernels` (as ncu names them) for one size of a target: kernel -> hash, only
/// for the kernels whose SASS could be read.
pub fn hashes(
    functions: &BTreeMap<String, String>,
    target: &Target,
    size: &Size,
    gpu_key: &str,
    kernels: &[&str],
) -> BTreeMap<String, String> {
    let salt = salt(target, size, gpu_key);
    kernels
        .iter()
        .filter_map(|k| kernel_hash(functions, k, &salt).map(|h| ((*k).to_owned(), h)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "
Fatbin elf code:
================
arch = sm_90
code version = [1,7]
host = linux
compile_size = 64bit

	code for sm_90
		Function : _Z10vector_addPKfS0_Pfi
	.headerflags    @\"EF_CUDA_SM90 EF_CUDA_PTX_SM(EF_CUDA_SM90)\"
        /*0000*/                   LDC R1, c[0x0][0x28] ;              /* 0x00000a00ff017b82 */
                                                                       /* 0x000e240000000800 */
        /*0010*/                   EXIT ;                              /* 0x000000000000794d */
        /*0020*/                   BRA 0x20;                           /* 0x000fc0000383ffff */
        ..........

		Function : scale
        /*0000*/                   EXIT ;
";

    #[test]
    fn splits_per_function_without_addresses() {
        let f = split(DUMP);
        assert_eq!(f.len(), 2);
        assert_eq!(
            f["_Z10vector_addPKfS0_Pfi"],
            "LDC R1, c[0x0][0x28] ;\nEXIT ;\nBRA 0x20;\n"
        );
        assert_eq!(f["scale"], "EXIT ;\n");
    }

    #[test]
    fn names_match_mangled_and_plain() {
        assert!(symbol_matches(
            "_Z10vector_addPKfS0_Pfi",
            "vector_add(const float *, const float *, float *, int)"
        ));
        assert!(symbol_matches("_Z10vector_addPKfS0_Pfi", "vector_add"));
        assert!(!symbol_matches("_Z10vector_addPKfS0_Pfi", "add"));
        assert!(symbol_matches("scale", "scale"));
        assert_eq!(base_name("void ns::gemm<float, 4>(float *, int)"), "gemm");
    }

    #[test]
    fn hash_depends_on_code_and_salt() {
        let f = split(DUMP);
        let a = kernel_hash(&f, "vector_add", "s1").unwrap();
        assert_eq!(kernel_hash(&f, "vector_add", "s1").unwrap(), a);
        assert_ne!(kernel_hash(&f, "vector_add", "s2").unwrap(), a);
        let g = split(&DUMP.replace("LDC R1", "LDC R2"));
        assert_ne!(kernel_hash(&g, "vector_add", "s1").unwrap(), a);
        // Addresses and encodings alone do not count.
        let h = split(
            &DUMP
                .replace("/*0010*/", "/*0110*/")
                .replace("0x000e24", "0x000e25"),
        );
        assert_eq!(kernel_hash(&h, "vector_add", "s1").unwrap(), a);
        assert_eq!(kernel_hash(&f, "missing_kernel", "s1"), None);
    }
}
