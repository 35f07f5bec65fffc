//! Clock locking through the `Gpu` trait: clocks are always reset, on every way out.

use crate::support;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cgp_profile::gpu::lock_clocks;
use cgp_profile::gpu::{FakeDevice, FakeGpu, Gpu, GpuError};
use cgp_spec::spec::model::ClockSetting;

fn fake(dev: FakeDevice) -> Arc<FakeGpu> {
    Arc::new(FakeGpu::new(vec![dev]))
}

fn lock(
    gpu: &Arc<FakeGpu>,
    setting: &ClockSetting,
) -> (cgp_gate::Result<cgp_profile::gpu::ClockGuard>, String) {
    let mut out = Vec::new();
    let g: Arc<dyn Gpu> = gpu.clone();
    let r = lock_clocks(g, 0, setting, false, &mut out);
    (r, String::from_utf8_lossy(&out).into_owned())
}

#[test]
fn base_clocks_locked_then_reset_on_drop() {
    let gpu = fake(FakeDevice::new("NVIDIA H200"));
    let (guard, out) = lock(&gpu, &ClockSetting::NvmlBase);
    let guard = guard.unwrap();
    let locked = guard.locked().unwrap();
    assert_eq!((locked.sm_mhz, locked.mem_mhz), (1590, Some(2619)));
    assert_eq!(
        gpu.calls(),
        [
            "set_locked_sm_clocks(0, 1590, 1590)",
            "set_locked_mem_clocks(0, 2619, 2619)"
        ]
    );
    assert!(
        out.contains("locked GPU 0 (NVIDIA H200) SM clock to 1590 MHz and memory clock to 2619 MHz"),
        "{out}"
    );
    drop(guard);
    assert_eq!(
        gpu.calls()[2..],
        ["reset_locked_sm_clocks(0)", "reset_locked_mem_clocks(0)"]
    );
}

#[test]
fn explicit_restore_resets_once() {
    let gpu = fake(FakeDevice::new("NVIDIA H200"));
    let (guard, _) = lock(&gpu, &ClockSetting::NvmlMax);
    guard.unwrap().restore().unwrap();
    assert_eq!(
        gpu.calls(),
        [
            "set_locked_sm_clocks(0, 1980, 1980)",
            "set_locked_mem_clocks(0, 2619, 2619)",
            "reset_locked_sm_clocks(0)",
            "reset_locked_mem_clocks(0)"
        ]
    );
}

#[test]
fn restore_failure_is_reported() {
    let mut dev = FakeDevice::new("NVIDIA H200");
    dev.reset_error = Some(GpuError::Other("GPU is lost".into()));
    let gpu = fake(dev);
    let (guard, _) = lock(&gpu, &ClockSetting::NvmlBase);
    let err = guard.unwrap().restore().unwrap_err().to_string();
    assert!(
        err.contains("failed to reset the SM clocks of GPU 0: GPU is lost"),
        "{err}"
    );
    assert!(err.contains("cgp-gate env --reset-clocks"), "{err}");
}

/// The error path of a run: `?` returns early and the guard resets on the way out.
fn a_run_that_fails(gpu: &Arc<FakeGpu>) -> cgp_gate::Result<()> {
    let g: Arc<dyn Gpu> = gpu.clone();
    let _guard = lock_clocks(g, 0, &ClockSetting::NvmlBase, false, &mut std::io::sink())?;
    Err(cgp_gate::Error::Environment("ncu failed".into()))
}

#[test]
fn error_path_resets() {
    let gpu = fake(FakeDevice::new("NVIDIA H200"));
    assert!(a_run_that_fails(&gpu).is_err());
    assert_eq!(gpu.calls().len(), 4);
    assert_eq!(gpu.calls()[2], "reset_locked_sm_clocks(0)");
}

#[test]
fn panic_resets() {
    let gpu = fake(FakeDevice::new("NVIDIA H200"));
    let g: Arc<dyn Gpu> = gpu.clone();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _guard = lock_clocks(g, 0, &ClockSetting::NvmlBase, false, &mut std::io::sink()).unwrap();
        panic!("a bug while profiling");
    }));
    assert!(r.is_err());
    assert_eq!(
        gpu.calls()[2..],
        ["reset_locked_sm_clocks(0)", "reset_locked_mem_clocks(0)"]
    );
}

#[test]
fn no_permission_is_a_clear_environment_error() {
    let mut dev = FakeDevice::new("NVIDIA H200");
    dev.lock_error = Some(GpuError::NoPermission);
    let gpu = fake(dev);
    let (r, _) = lock(&gpu, &ClockSetting::NvmlBase);
    let err = r.unwrap_err();
    assert_eq!(err.exit_code(), 3);
    let msg = err.to_string();
    assert!(msg.contains("permission denied"), "{msg}");
    assert!(msg.contains("run cgp-gate as root"), "{msg}");
    assert!(msg.contains("`clocks: ncu`"), "{msg}");
    // The lock never took: nothing to reset.
    assert_eq!(gpu.calls(), ["set_locked_sm_clocks(0, 1590, 1590)"]);
}

#[test]
fn memory_lock_failure_resets_the_sm_lock() {
    let mut dev = FakeDevice::new("NVIDIA H200");
    dev.mem_lock_error = Some(GpuError::Other("unknown error".into()));
    let gpu = fake(dev);
    let (r, _) = lock(&gpu, &ClockSetting::NvmlBase);
    assert!(
        r.unwrap_err()
            .to_string()
            .contains("cannot lock the memory clock of GPU 0")
    );
    let calls = gpu.calls();
    assert_eq!(calls[0], "set_locked_sm_clocks(0, 1590, 1590)");
    assert!(
        calls.contains(&"reset_locked_sm_clocks(0)".to_owned()),
        "{calls:?}"
    );
}

#[test]
fn pre_ampere_locks_sm_only() {
    let mut dev = FakeDevice::new("Tesla V100-SXM2-16GB");
    dev.mem_lock_error = Some(GpuError::NotSupported);
    let gpu = fake(dev);
    let (r, out) = lock(&gpu, &ClockSetting::NvmlBase);
    let guard = r.unwrap();
    assert_eq!(guard.locked().unwrap().mem_mhz, None);
    assert!(out.contains("cannot lock its memory clock"), "{out}");
    drop(guard);
    // Only the SM lock is reset: the memory lock never took.
    assert_eq!(
        gpu.calls(),
        [
            "set_locked_sm_clocks(0, 1590, 1590)",
            "set_locked_mem_clocks(0, 2619, 2619)",
            "reset_locked_sm_clocks(0)"
        ]
    );
}

#[test]
fn fixed_clocks_are_validated() {
    let gpu = fake(FakeDevice::new("NVIDIA H200"));
    let (r, _) = lock(
        &gpu,
        &ClockSetting::Fixed {
            sm_mhz: 1412,
            mem_mhz: 2619,
        },
    );
    let msg = r.unwrap_err().to_string();
    assert!(
        msg.contains("SM clock 1412 MHz is not supported with memory at 2619 MHz"),
        "{msg}"
    );
    assert!(
        msg.contains("nearest supported: 1390, 1405, 1420, 1435 MHz"),
        "{msg}"
    );
    let (r, _) = lock(
        &gpu,
        &ClockSetting::Fixed {
            sm_mhz: 1405,
            mem_mhz: 1000,
        },
    );
    let msg = r.unwrap_err().to_string();
    assert!(
        msg.contains("memory clock 1000 MHz is not supported; supported: 2619, 1593 MHz"),
        "{msg}"
    );
    assert!(gpu.calls().is_empty());

    let (r, _) = lock(
        &gpu,
        &ClockSetting::Fixed {
            sm_mhz: 1405,
            mem_mhz: 1593,
        },
    );
    drop(r.unwrap());
    assert_eq!(
        gpu.calls()[..2],
        [
            "set_locked_sm_clocks(0, 1405, 1405)",
            "set_locked_mem_clocks(0, 1593, 1593)"
        ]
    );
}

#[test]
fn mig_refuses_nvml_locking() {
    let mut dev = FakeDevice::new("NVIDIA H100 80GB HBM3");
    dev.mig_enabled = true;
    let gpu = fake(dev);
    let (r, _) = lock(&gpu, &ClockSetting::NvmlMax);
    assert!(r.unwrap_err().to_string().contains("MIG mode is enabled"));
    assert!(gpu.calls().is_empty());
}

#[test]
fn ncu_none_and_dry_run_touch_nothing() {
    let gpu = fake(FakeDevice::new("NVIDIA H200"));
    for setting in [ClockSetting::Ncu, ClockSetting::None] {
        let (r, out) = lock(&gpu, &setting);
        assert!(r.unwrap().locked().is_none());
        assert!(out.is_empty());
    }
    let mut out = Vec::new();
    let g: Arc<dyn Gpu> = gpu.clone();
    let guard = lock_clocks(g, 0, &ClockSetting::NvmlBase, true, &mut out).unwrap();
    drop(guard);
    let out = String::from_utf8(out).unwrap();
    assert_eq!(
        out.trim(),
        "clocks (dry run): would lock GPU 0 (NVIDIA H200) SM clock to 1590 MHz and memory clock \
         to 2619 MHz (`clocks: nvml-base`), then reset them to the driver defaults when the run \
         ends or is interrupted"
    );
    assert!(gpu.calls().is_empty(), "{:?}", gpu.calls());
}

#[test]
fn missing_device_is_an_error() {
    let gpu = fake(FakeDevice::new("NVIDIA H200"));
    let g: Arc<dyn Gpu> = gpu.clone();
    let err = lock_clocks(g, 3, &ClockSetting::NvmlBase, false, &mut std::io::sink()).unwrap_err();
    assert_eq!(err.to_string(), "cannot lock clocks: GPU 3: no GPU with index 3");
}

#[test]
fn reset_all_clocks_reports_each_gpu() {
    let mut old = FakeDevice::new("Tesla V100-SXM2-16GB");
    old.mem_lock_error = Some(GpuError::NotSupported);
    let gpu = FakeGpu::new(vec![FakeDevice::new("NVIDIA H200"), old]);
    let mut out = Vec::new();
    cgp_profile::gpu::reset_all_clocks(&gpu, true, &mut out).unwrap();
    assert!(gpu.calls().is_empty());
    out.clear();
    cgp_profile::gpu::reset_all_clocks(&gpu, false, &mut out).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "GPU 0 (NVIDIA H200): SM clocks reset, memory clocks reset\n\
         GPU 1 (Tesla V100-SXM2-16GB): SM clocks reset, memory clocks not supported\n"
    );
    let mut dev = FakeDevice::new("NVIDIA H200");
    dev.reset_error = Some(GpuError::NoPermission);
    let err = cgp_profile::gpu::reset_all_clocks(&FakeGpu::new(vec![dev]), false, &mut std::io::sink())
        .unwrap_err();
    assert_eq!(err.exit_code(), 3);
    assert!(err.to_string().contains("permission denied; run as root"));
}

// ---- signals, in a real child process ---------------------------------------------------------

const CHILD_LOG_ENV: &str = "CGP_GATE_TEST_CLOCK_LOG";

/// Run by `signal_resets_clocks` as a child process: locks clocks on a fake GPU that logs its
/// calls to a file, says so, and waits to be killed.
#[test]
#[ignore = "helper: run as a child process by the signal tests"]
fn child_locks_and_waits() {
    let Some(log) = std::env::var_os(CHILD_LOG_ENV) else {
        return;
    };
    let gpu: Arc<dyn Gpu> = Arc::new(
        FakeGpu::new(vec![FakeDevice::new("NVIDIA H200")])
            .with_call_log(std::path::Path::new(&log))
            .unwrap(),
    );
    let guard = lock_clocks(gpu, 0, &ClockSetting::NvmlBase, false, &mut std::io::sink()).unwrap();
    println!("\nclock-guard-child: locked");
    std::thread::sleep(Duration::from_secs(60));
    drop(guard);
}

fn signal_resets_clocks(signal: &str, expected_code: i32) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &support::test_name(module_path!(), "child_locks_and_waits"),
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_LOG_ENV, &log)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut saw_locked = false;
    for line in BufReader::new(stdout).lines() {
        if line.unwrap().contains("clock-guard-child: locked") {
            saw_locked = true;
            break;
        }
    }
    assert!(saw_locked, "child never locked");
    let status = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "child did not exit after {signal}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(expected_code), "{status}");
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        calls.lines().collect::<Vec<_>>(),
        [
            "set_locked_sm_clocks(0, 1590, 1590)",
            "set_locked_mem_clocks(0, 2619, 2619)",
            "reset_locked_sm_clocks(0)",
            "reset_locked_mem_clocks(0)"
        ]
    );
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(
        err.contains("received;") && err.contains("locked GPU clocks reset"),
        "{err}"
    );
}

// Exit 3 (issue 34; 128 + the signal before): a run stopped from outside has no verdict.
#[test]
fn sigterm_resets_clocks_and_exits_3() {
    signal_resets_clocks("-TERM", 3);
}

#[test]
fn sigint_resets_clocks_and_exits_3() {
    signal_resets_clocks("-INT", 3);
}

#[test]
fn sigalrm_resets_clocks_and_exits_3() {
    signal_resets_clocks("-ALRM", 3);
}
