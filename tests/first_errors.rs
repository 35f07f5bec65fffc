//! The first errors a newcomer meets (issue 37), each as a user meets it: a live `check` on a
//! machine without a usable GPU, ...

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cgp-gate"));
    for v in ["GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "CGP_GATE_NVML_LIB"] {
        c.env_remove(v);
    }
    c
}

fn output(c: &mut Command) -> (i32, String) {
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

fn have(tool: &str, arg: &str) -> bool {
    Command::new(tool).arg(arg).output().is_ok_and(|o| o.status.success())
}

/// A live `check` of examples/cgp-gate.yaml against its baselines (of the synthetic GPU) with the
/// real ncu and without a usable GPU: it says there is none, with NVML's own error, and exits 3
/// (it used to say "no baseline of `matmul` for this GPU (`unknown`)" and suggest an option that
/// changes nothing). Twice: NVML's library absent (CGP_GATE_NVML_LIB pointing nowhere), and, on
/// a machine where the library is installed but no GPU is (this one after .ci/setup: Debian's
/// libnvidia-ml), the real library's refusal.
#[test]
fn a_live_check_without_a_gpu_says_so_and_exits_3() {
    if !have("ncu", "--version") {
        support::skip(
            "a_live_check_without_a_gpu_says_so_and_exits_3",
            "ncu is not installed (.ci/setup installs Debian's nsight-compute)",
        );
        return;
    }
    let check = || {
        let mut c = bin();
        c.current_dir(root().join("examples"))
            .args(["check", "--spec", "cgp-gate.yaml", "--baselines", "baselines"]);
        c
    };
    let (code, said) = output(check().env("CGP_GATE_NVML_LIB", "/nonexistent/libnvidia-ml.so.1"));
    assert_eq!(code, 3, "{said}");
    assert!(said.contains("error: no usable GPU: no NVIDIA driver found (NVML could not be loaded"), "{said}");
    assert!(!said.contains("--allow-fingerprint-mismatch") && !said.contains("no baseline of"), "{said}");

    let gpu_here = have("nvidia-smi", "-L");
    let lib_here = ["/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "/usr/lib64/libnvidia-ml.so.1"]
        .iter()
        .any(|p| Path::new(p).exists());
    if gpu_here || !lib_here {
        // With a GPU the real library opens it; without the library the case above is this one.
        return;
    }
    let (code, said) = output(&mut check());
    assert_eq!(code, 3, "{said}");
    assert!(said.contains("error: no usable GPU: NVIDIA driver not usable (NVML failed to initialise: "), "{said}");
    assert!(said.contains("--replay DIR"), "{said}");
}
