//! The CUPTI injection library on real parts (issue 36): the real CUDA driver library (Debian's
//! libcuda 535), the real libcupti (Debian's 11.8), real nvcc-built programs, on this machine
//! without a GPU; and the library's record decoding on records laid out as CUPTI's own headers
//! define them, for every kernel record version from CUDA 11.8 to 13.5.
//!
//! - Live: the driver loads the library (`CUDA_INJECTION64_PATH`) and calls
//!   `InitializeInjection` even without a GPU; libcupti loads and refuses
//!   (`CUPTI_ERROR_NOT_INITIALIZED`); the trace file says so, the program says "no CUDA-capable
//!   device", and nothing hangs (every run has a time limit).
//! - Decoding: `fixtures/cupti/decode.c` fills kernel records (the installed `cupti_activity.h`'s
//!   `CUpti_ActivityKernel8` struct; and byte buffers laid out by `fixtures/cupti/kernel-layouts.txt`,
//!   which scripts/cupti-layouts.py compiled from each release's header) and runs them through the
//!   library's decoder.
//!
//! Without a C compiler, nvcc, libcuda or libcupti these print `SKIPPED: ...` (CI fails instead).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use cgp_profile::cupti::inject::{ready_in, run_environment};
use cgp_profile::cupti::locate::find_libcupti;
use cgp_read::cupti_trace::{KernelRecord, files_of, parse};

use cgp_test_support::root;
use cgp_test_support::skip;

fn fixture(rel: &str) -> PathBuf {
    root().join("tests/fixtures/cupti").join(rel)
}

/// Run `cmd` with a time limit; a run past it is killed and fails the test (never a hang).
fn run_limited(cmd: &mut Command, limit: Duration) -> Output {
    run_with_pid(cmd, limit).0
}

/// [`run_limited`], with the process's id.
fn run_with_pid(cmd: &mut Command, limit: Duration) -> (Output, u32) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
    let pid = child.id();
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} ran past {limit:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    (child.wait_with_output().expect("collect the output"), pid)
}

/// The injection library, written into `dir` as cgp-gate writes it into its cache.
fn library(dir: &Path) -> PathBuf {
    ready_in(Some(dir)).expect("the injection library")
}

/// Compile the decoding test program; `None` (skipped) without a C compiler.
fn build_decoder(test: &str, dir: &Path, real_header: bool) -> Option<PathBuf> {
    let Ok(cc) = which::which("cc") else {
        skip(test, "no C compiler (cc) on PATH");
        return None;
    };
    let exe = dir.join(if real_header { "decode-real" } else { "decode" });
    let mut cmd = Command::new(cc);
    if real_header {
        cmd.arg("-DREAL_HEADER");
    }
    let out = run_limited(
        cmd.args(["-Wall", "-Wextra", "-Werror", "-o"])
            .arg(&exe)
            .arg(fixture("decode.c"))
            .arg("-ldl"),
        Duration::from_secs(120),
    );
    assert!(
        out.status.success(),
        "cc decode.c: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(exe)
}

/// The decoder's output: per record version, the kernel the library decoded and the one the
/// test stored, each read by the trace reader.
fn decode(
    exe: &Path,
    lib: &Path,
    layouts: Option<&Path>,
) -> (Vec<(u32, KernelRecord, KernelRecord)>, String) {
    let mut cmd = Command::new(exe);
    cmd.arg(lib);
    if let Some(l) = layouts {
        cmd.arg(l);
    }
    let out = run_limited(&mut cmd, Duration::from_secs(60));
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let one = |line: &str| {
        let trace = format!("{{\"cgp_gate_cupti\":1,\"pid\":1}}\n{line}\n");
        let t = parse(trace.as_bytes()).unwrap_or_else(|e| panic!("{line}: {e}"));
        t.kernels[0].clone()
    };
    let mut rows = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(record) = line.strip_prefix("record\t") else {
            continue;
        };
        let got = lines.next().and_then(|l| l.strip_prefix("got\t")).expect("got");
        if got == "(not a kernel)" {
            continue;
        }
        let want = lines.next().and_then(|l| l.strip_prefix("want\t")).expect("want");
        rows.push((record.parse().expect("record"), one(got), one(want)));
    }
    (rows, text)
}

#[test]
fn decoding_records_of_the_installed_cupti_header() {
    let test = "cupti_lib::decoding_records_of_the_installed_cupti_header";
    let header = Path::new("/usr/include/cupti_activity.h");
    if !header.is_file() {
        return skip(test, "no /usr/include/cupti_activity.h (Debian's libcupti-dev)");
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build_decoder(test, dir.path(), true) else {
        return;
    };
    let (rows, text) = decode(&exe, &library(dir.path()), None);
    assert_eq!(rows.len(), 1, "{text}");
    let (record, got, want) = &rows[0];
    assert_eq!(*record, 8);
    assert_eq!(got, want, "{text}");
    assert_eq!(
        got.name,
        "void cgpns::gemm<128, float>(float const*, float const*, float*, int)"
    );
    assert_eq!(
        (got.grid, got.block, got.registers),
        ([4104, 3, 2], [256, 1, 1], 38)
    );
    assert_eq!(got.end_ns - got.start_ns, 123_456_797);
    // A record of another kind (a memcpy) is not taken for a kernel.
    assert!(text.contains("got\t(not a kernel)"), "{text}");
}

#[test]
fn decoding_every_kernel_record_version_from_cuda_11_8_to_13_5() {
    let test = "cupti_lib::decoding_every_kernel_record_version_from_cuda_11_8_to_13_5";
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build_decoder(test, dir.path(), false) else {
        return;
    };
    let layouts = fixture("kernel-layouts.txt");
    let (rows, text) = decode(&exe, &library(dir.path()), Some(&layouts));
    let versions: Vec<u32> = rows.iter().map(|r| r.0).collect();
    assert_eq!(versions, [8, 9, 10, 11, 12, 13], "{text}");
    for (record, got, want) in &rows {
        assert_eq!(got, want, "CUpti_ActivityKernel{record}");
        assert_eq!(got.context, 100 + record);
    }
    // Each release's CUPTI API version maps to the record version its header names.
    let maps: Vec<&str> = text.lines().filter(|l| l.starts_with("map\t")).collect();
    assert_eq!(maps.len(), 9, "{text}");
    for m in maps {
        let f: Vec<&str> = m.split('\t').collect();
        assert_eq!(
            f[3], f[4],
            "{}: the header says CUpti_ActivityKernel{}, the library reads {}",
            f[1], f[3], f[4]
        );
    }

    // The check can fail: move one field in the table and the decoder's value no longer matches.
    let planted = dir.path().join("planted.txt");
    let table = std::fs::read_to_string(&layouts).unwrap();
    let moved = table.replace(
        "\n13 correlationId 92 4\n",
        "\n13 correlationId 84 4\n13 localMemoryPerThread 92 4\n",
    );
    assert_ne!(moved, table);
    std::fs::write(&planted, moved).unwrap();
    let (rows, _) = decode(&exe, &library(dir.path()), Some(&planted));
    let (_, got, want) = rows.iter().find(|r| r.0 == 13).unwrap();
    assert_ne!(got.correlation, want.correlation);
}

/// What the live tests need: nvcc, the driver library, libcupti. `None` (skipped) when missing.
fn live_parts(test: &str) -> Option<(PathBuf, PathBuf)> {
    let Ok(nvcc) = which::which("nvcc") else {
        skip(test, "no nvcc (Debian's nvidia-cuda-toolkit)");
        return None;
    };
    let ldconfig = Command::new("ldconfig")
        .arg("-p")
        .output()
        .or_else(|_| Command::new("/sbin/ldconfig").arg("-p").output());
    if !ldconfig.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("libcuda.so.1 ")) {
        skip(test, "no libcuda.so.1 (Debian's libcuda1) in ldconfig's cache");
        return None;
    }
    match find_libcupti(None) {
        Ok(lib) => Some((nvcc, lib)),
        Err(e) => {
            skip(test, &format!("no libcupti: {e}"));
            None
        }
    }
}

fn nvcc(nvcc: &Path, src: &Path, exe: &Path) {
    let out = run_limited(
        Command::new(nvcc)
            .args(["-O2", "-arch=sm_90", "-o"])
            .arg(exe)
            .arg(src),
        Duration::from_secs(300),
    );
    assert!(
        out.status.success(),
        "nvcc {}: {}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Run `exe` with the injection library writing `out`: its output and its pid.
fn run_injected_pid(exe: &Path, lib: &Path, libcupti: &Path, out: &Path, args: &[&str]) -> (Output, u32) {
    let mut cmd = Command::new(exe);
    cmd.args(args).envs(run_environment(
        lib,
        libcupti,
        out,
        "0123456789abcdef0123456789abcdef",
    ));
    run_with_pid(&mut cmd, Duration::from_secs(60))
}

fn run_injected(exe: &Path, lib: &Path, libcupti: &Path, out: &Path, args: &[&str]) -> Output {
    run_injected_pid(exe, lib, libcupti, out, args).0
}

#[test]
fn a_real_program_under_the_real_driver_records_cuptis_refusal() {
    let test = "cupti_lib::a_real_program_under_the_real_driver_records_cuptis_refusal";
    let Some((nvcc_path, libcupti)) = live_parts(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("vector_add");
    nvcc(&nvcc_path, &root().join("examples/cuda/vector_add.cu"), &exe);
    let lib = library(dir.path());
    let out = dir.path().join("0.cupti");
    let (run, pid) = run_injected_pid(&exe, &lib, &libcupti, &out, &[]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "without a GPU the program fails: {stderr}");
    assert!(stderr.contains("no CUDA-capable device"), "{stderr}");
    let trace = parse(&std::fs::read(&out).expect("the driver loaded the library: a trace file")).unwrap();
    let failure = trace.error.expect("CUPTI's refusal is recorded");
    assert_eq!(failure.call, "cuptiActivityRegisterCallbacks");
    assert_eq!(failure.message, "CUPTI_ERROR_NOT_INITIALIZED", "{failure:?}");
    assert_eq!(failure.code, 15);
    assert!(trace.complete, "the flush at exit wrote the trailer");
    assert!(trace.kernels.is_empty() && trace.dropped == 0);
    assert!(trace.cupti_version >= 18, "{}", trace.cupti_version);
    assert_eq!(trace.pid, pid);
    // The run's nonce, copied by the library into the header (issue 44, item 3).
    assert_eq!(trace.nonce.as_deref(), Some("0123456789abcdef0123456789abcdef"));

    // A second process with the same file name never replaces the first's: it writes <name>.<pid>.
    let before = std::fs::read(&out).unwrap();
    let (again, pid2) = run_injected_pid(&exe, &lib, &libcupti, &out, &[]);
    assert!(!again.status.success());
    assert_eq!(std::fs::read(&out).unwrap(), before);
    let files = files_of(&out);
    assert_eq!(files.len(), 2, "{files:?}");
    assert_eq!(files[0], out);
    let others = &files[1..];
    assert_eq!(others.len(), 1, "{others:?}");
    let second = parse(&std::fs::read(&others[0]).unwrap()).unwrap();
    assert_eq!(second.pid, pid2);
    assert!(others[0].to_string_lossy().ends_with(&format!("0.cupti.{pid2}")));
}

#[test]
fn a_libcupti_that_cannot_load_and_a_program_that_dies_or_never_starts_cuda() {
    let test = "cupti_lib::a_libcupti_that_cannot_load_and_a_program_that_dies_or_never_starts_cuda";
    let Some((nvcc_path, libcupti)) = live_parts(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("early_exit");
    nvcc(&nvcc_path, &fixture("early_exit.cu"), &exe);
    let lib = library(dir.path());

    // libcupti missing: dlopen's own error, and the program runs its course.
    let out = dir.path().join("missing.cupti");
    let run = run_injected(&exe, &lib, &dir.path().join("no/libcupti.so"), &out, &[]);
    assert!(run.status.success(), "{run:?}");
    let trace = parse(&std::fs::read(&out).unwrap()).unwrap();
    let failure = trace.error.expect("dlopen's failure");
    assert_eq!((failure.call.as_str(), failure.code), ("dlopen", -1));
    assert!(failure.message.contains("no/libcupti.so"), "{failure:?}");
    assert_eq!(trace.cupti_version, 0);

    // Died before the flush (`_exit`): the header and CUPTI's answer are there, the trailer is not.
    let out = dir.path().join("died.cupti");
    let run = run_injected(&exe, &lib, &libcupti, &out, &[]);
    assert!(
        String::from_utf8_lossy(&run.stderr).contains("cudaGetDeviceCount: no CUDA-capable device"),
        "{run:?}"
    );
    let trace = parse(&std::fs::read(&out).unwrap()).unwrap();
    assert!(!trace.complete);
    assert_eq!(
        trace.error.map(|e| e.message),
        Some("CUPTI_ERROR_NOT_INITIALIZED".to_owned())
    );

    // Never initialised CUDA: the driver never loaded the library, so there is no file.
    let out = dir.path().join("never.cupti");
    let run = run_injected(&exe, &lib, &libcupti, &out, &["no-cuda"]);
    assert!(run.status.success());
    assert!(!out.exists());
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().contains(".tmp."))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

/// The trace files in fixtures/cupti/traces (README.md there says how each was made) read as
/// what they are.
#[test]
fn the_recorded_trace_files_read_back() {
    let read = |name: &str| {
        let bytes = std::fs::read(fixture("traces").join(name)).unwrap();
        parse(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let t = read("refused-cupti-11.8.cupti");
    assert_eq!((t.cupti_version, t.complete), (18, true));
    assert_eq!(t.error.unwrap().message, "CUPTI_ERROR_NOT_INITIALIZED");
    let t = read("refused-cupti-13.0.cupti");
    assert_eq!((t.cupti_version, t.complete), (130_000, true));
    assert_eq!(t.error.unwrap().message, "CUPTI_ERROR_UNKNOWN");
    let t = read("dlopen-failed.cupti");
    assert_eq!(t.error.unwrap().call, "dlopen");
    let t = read("died-before-flush.cupti");
    assert!(!t.complete && t.error.is_some());
    let t = read("synthetic-kernels.cupti");
    assert!(t.complete && t.error.is_none());
    assert_eq!(t.kernels.len(), 6);
    assert!(
        t.kernels
            .iter()
            .all(|k| k.name.starts_with("void cgpns::gemm<128, float>("))
    );
}

/// build.rs compiles inject.c with warnings shown but not fatal (a user's newer compiler must not
/// break `cargo install`); here they are errors.
#[test]
fn the_injection_library_compiles_without_warnings() {
    let test = "cupti_lib::the_injection_library_compiles_without_warnings";
    let Ok(cc) = which::which("cc") else {
        return skip(test, "no C compiler (cc) on PATH");
    };
    let dir = tempfile::tempdir().unwrap();
    let so = dir.path().join("lib.so");
    let out = run_limited(
        Command::new(cc)
            .args([
                "-shared",
                "-fPIC",
                "-std=gnu11",
                "-O2",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-o",
            ])
            .arg(&so)
            .arg(root().join("crates/cgp-profile/src/cupti/inject.c"))
            .args(["-ldl", "-lpthread"]),
        Duration::from_secs(120),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(so.is_file());
}

/// A trace file that cannot be created (its folder is missing): no file, and the program's
/// stderr says why; the program itself runs its course.
#[test]
fn a_trace_file_that_cannot_be_created_is_said_on_stderr() {
    let test = "cupti_lib::a_trace_file_that_cannot_be_created_is_said_on_stderr";
    let Some((nvcc_path, libcupti)) = live_parts(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("early_exit");
    nvcc(&nvcc_path, &fixture("early_exit.cu"), &exe);
    let out = dir.path().join("missing-folder/0.cupti");
    let run = run_injected(&exe, &library(dir.path()), &libcupti, &out, &[]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains(&format!(
            "cgp-gate CUPTI injection library: cannot create {}: No such file or directory",
            out.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("cudaGetDeviceCount: no CUDA-capable device"),
        "{stderr}"
    );
    assert!(!out.exists());
}
