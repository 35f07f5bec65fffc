//! The SASS cache on real machine code: the example programs built with nvcc 11.8 for sm_90 and
//! read with the real `cuobjdump -sass`; the skip through the binary on the example recordings
//! (SYNTHETIC samples made by examples/synthesize_recording.rs). Without nvcc or cuobjdump these
//! tests print `SKIPPED` (and fail under CI=true).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command as Std;

use crate::support::{bin, root};
use serde_json::Value;

fn tools(test: &str) -> bool {
    for tool in ["nvcc", "cuobjdump"] {
        let found = Std::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            support::skip(
                test,
                &format!("`{tool}` is not installed; run `bash .ci/setup` (Debian's nvidia-cuda-toolkit)"),
            );
            return false;
        }
    }
    true
}

/// Build `examples/cuda/<src>` (or `source` when given) into `out` with the planted macros.
fn nvcc(src: &Path, out: &Path, defines: &[&str]) {
    let mut c = Std::new("nvcc");
    c.args(["-O3", "-arch=sm_90", "-lineinfo"])
        .arg("-I")
        .arg(root().join("examples/cuda"))
        .args(defines)
        .arg("-o")
        .arg(out)
        .arg(src);
    let o = c.output().unwrap();
    assert!(
        o.status.success(),
        "nvcc failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

const VECTOR_ADD: &str = "vector_add(const float *, const float *, float *, int)";

fn hash_of(exe: &Path, kernel: &str) -> Option<String> {
    let text = cgp_profile::profile::sass::dump(Path::new("cuobjdump"), exe).unwrap();
    let f = cgp_profile::profile::sass::split(&text);
    cgp_profile::profile::sass::kernel_hash(&f, kernel, "same salt")
}

#[test]
fn a_planted_kernel_change_changes_the_hash_and_a_change_elsewhere_does_not() {
    if !tools("a_planted_kernel_change_changes_the_hash_and_a_change_elsewhere_does_not") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = root().join("examples/cuda/vector_add.cu");
    let base = dir.path().join("base");
    nvcc(&src, &base, &[]);
    // The planted regression: 3% more arithmetic in every kernel.
    let extra = dir.path().join("extra");
    nvcc(&src, &extra, &["-DCGP_EXTRA_WORK_PCT=3"]);
    // Host code only: a worse launch configuration.
    let launch = dir.path().join("launch");
    nvcc(&src, &launch, &["-DCGP_BAD_LAUNCH=1"]);
    // Another kernel added to the same file: the dump changes, this kernel's code does not.
    let more_src = dir.path().join("more.cu");
    let text = std::fs::read_to_string(&src).unwrap();
    std::fs::write(
        &more_src,
        format!("{text}\n__global__ void another_kernel(float* x) {{ x[threadIdx.x] *= 2.0f; }}\n"),
    )
    .unwrap();
    let more = dir.path().join("more");
    nvcc(&more_src, &more, &[]);

    let h = hash_of(&base, VECTOR_ADD).expect("vector_add's SASS is in the dump");
    assert_ne!(hash_of(&extra, VECTOR_ADD).unwrap(), h, "planted kernel change");
    assert_eq!(hash_of(&launch, VECTOR_ADD).unwrap(), h, "host-only change");
    let dump_more = cgp_profile::profile::sass::dump(Path::new("cuobjdump"), &more).unwrap();
    let dump_base = cgp_profile::profile::sass::dump(Path::new("cuobjdump"), &base).unwrap();
    assert_ne!(dump_more, dump_base, "the other kernel is in the dump");
    assert!(dump_more.contains("another_kernel"));
    assert_eq!(
        hash_of(&more, VECTOR_ADD).unwrap(),
        h,
        "a new kernel elsewhere in the file"
    );
    // A kernel the binary does not hold has no hash (it is always profiled).
    assert_eq!(hash_of(&base, "matmul_tiled"), None);
    // A file that is not a CUDA binary: cuobjdump's failure is an error, not a hash.
    let not = dir.path().join("not-a-binary");
    std::fs::write(&not, "text").unwrap();
    assert!(cgp_profile::profile::sass::dump(Path::new("cuobjdump"), &not).is_err());
}

fn check(spec: &Path, recording: &str, baselines: &Path, extra: &[&str]) -> (i32, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("results.json");
    let out = bin()
        .args(["check", "--spec"])
        .arg(spec)
        .arg("--replay")
        .arg(recording)
        .arg("--baselines")
        .arg(baselines)
        .arg("--json")
        .arg(&json)
        .args(extra)
        .output()
        .unwrap();
    let results = std::fs::read_to_string(&json)
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    (
        out.status.code().unwrap(),
        results,
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

fn skipped(r: &Value) -> Vec<&Value> {
    r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| row["skipped"] == "same-sass")
        .collect()
}

#[test]
fn check_skips_kernels_with_the_baselines_sass_and_profiles_changed_ones() {
    if !tools("check_skips_kernels_with_the_baselines_sass_and_profiles_changed_ones") {
        return;
    }
    // The example spec beside a real build of vector_add (matmul and reduce are not built:
    // their SASS cannot be read, so they are always profiled).
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("cgp-gate.yaml");
    std::fs::copy(root().join("examples/cgp-gate.yaml"), &spec).unwrap();
    std::fs::create_dir_all(dir.path().join("build")).unwrap();
    let exe = dir.path().join("build/vector_add");
    let src = root().join("examples/cuda/vector_add.cu");
    nvcc(&src, &exe, &[]);
    let store = dir.path().join("baselines");
    let up = bin()
        .args(["baseline", "update", "--spec"])
        .arg(&spec)
        .args(["--replay", "examples/recordings/main", "--baselines"])
        .arg(&store)
        .output()
        .unwrap();
    let up_text = String::from_utf8_lossy(&up.stdout).into_owned() + &String::from_utf8_lossy(&up.stderr);
    assert!(up.status.success(), "{up_text}");
    assert!(
        up_text.contains("the SASS cache does not apply to `matmul`"),
        "{up_text}"
    );
    let stored: Value = serde_json::from_str(
        &std::fs::read_to_string(store.join("synthetic-gpu-no-hardware/vector_add.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        stored["sass"]["n=1048576"]["vector_add"].as_str().unwrap().len(),
        64
    );

    // Same machine code: vector_add is not profiled; its rows pass as unchanged.
    let rep = |f: &str| dir.path().join(f).to_str().unwrap().to_owned();
    let (md, html, junit) = (rep("r.md"), rep("r.html"), rep("r.xml"));
    let (code, r, out) = check(
        &spec,
        "examples/recordings/pr-same",
        &store,
        &["--markdown", &md, "--html", &html, "--junit", &junit],
    );
    assert_eq!(code, 0, "{out}");
    // Every report shows the skipped rows apart, with the time saved.
    assert!(
        out.contains("2 kernels in 2 sizes not profiled: unchanged (same machine code"),
        "{out}"
    );
    assert!(out.contains("saved "), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("unchanged") && l.contains("vector_add")),
        "{out}"
    );
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("not profiled"), "{md}");
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(
        html.contains("<div class=\"banner skipped\">2 kernels in 2 sizes not profiled"),
        "{html}"
    );
    assert!(html.contains(">unchanged</span>"));
    let junit = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(junit.matches("type=\"same-sass\"").count(), 6, "{junit}");
    let s = skipped(&r);
    assert_eq!(s.len(), 6, "2 sizes x 3 metrics of vector_add: {out}");
    assert!(s.iter().all(|row| row["target"] == "vector_add"
        && row["verdict"] == "pass"
        && row["reason"] == "unchanged (same machine code)"));
    assert!(
        !r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|row| row["verdict"] == "missing")
    );
    assert_eq!(r["sass_skip"]["kernels"], 2);
    assert_eq!(r["sass_skip"]["sizes"], 2);
    assert!(r["sass_skip"]["gpu_time_saved_ns"].as_f64().unwrap() > 0.0);
    assert!(out.contains("skipping `vector_add` [n=1048576]"), "{out}");
    assert!(
        r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|row| row["target"] == "matmul" && row["skipped"].is_null())
    );

    // --no-skip profiles everything.
    let (code, r, out) = check(&spec, "examples/recordings/pr-same", &store, &["--no-skip"]);
    assert_eq!(code, 0, "{out}");
    assert!(skipped(&r).is_empty());
    assert!(r.get("sass_skip").is_none());

    // A planted change to the kernel's code: profiled again.
    nvcc(&src, &exe, &["-DCGP_EXTRA_WORK_PCT=3"]);
    let (_, r, out) = check(&spec, "examples/recordings/pr-same", &store, &[]);
    assert!(skipped(&r).is_empty(), "{out}");
    assert!(
        r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|row| row["target"] == "vector_add")
    );

    // A binary that is gone: its kernels are profiled.
    std::fs::remove_file(&exe).unwrap();
    let (_, r, out) = check(&spec, "examples/recordings/pr-same", &store, &[]);
    assert!(skipped(&r).is_empty(), "{out}");
    assert!(out.contains("its SASS cannot be read"), "{out}");
}

/// Compile `src` (a `.cu` text) with nvcc 11.8 for sm_90 and the given extra arguments.
fn nvcc_text(dir: &Path, name: &str, src: &str, args: &[&str]) -> PathBuf {
    let cu = dir.join(format!("{name}.cu"));
    std::fs::write(&cu, src).unwrap();
    let out = dir.join(name);
    let o = Std::new("nvcc")
        .args(["-O3"])
        .args(args)
        .arg("-o")
        .arg(&out)
        .arg(&cu)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "nvcc failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

const LIB: &str = r#"
__global__ void lib_scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * a + PLANTED;
}
void run_scale(float* x, float a, int n) { lib_scale<<<(n + 255) / 256, 256>>>(x, a, n); }
"#;

const APP: &str = r#"
#include <cuda_runtime.h>
void run_scale(float* x, float a, int n);
__global__ void app_fill(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 1.0f;
}
int main() {
    float* x; int n = 1024;
    cudaMalloc(&x, n * sizeof(float));
    app_fill<<<4, 256>>>(x, n);
    run_scale(x, 2.0f, n);
    return cudaDeviceSynchronize() != cudaSuccess;
}
"#;

fn spec_target(dir: &Path, extra: &str) -> cgp_spec::spec::Spec {
    let path = dir.join("cgp-gate.yaml");
    std::fs::write(
        &path,
        format!(
            "version: 1\ntargets:\n  - name: app\n    command: [./app]\n    kernel: regex:.\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n{extra}"
        ),
    )
    .unwrap();
    cgp_spec::spec::load(&path).unwrap()
}

#[test]
fn kernels_in_the_libraries_the_executable_names_are_hashed_and_sass_paths_replace_them() {
    let test = "kernels_in_the_libraries_the_executable_names_are_hashed_and_sass_paths_replace_them";
    if !tools(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let so = ["-arch=sm_90", "-shared", "-Xcompiler", "-fPIC"];
    let build_lib = |planted: &str| {
        let lib = nvcc_text(d, "libscale.so", &LIB.replace("PLANTED", planted), &so);
        assert!(lib.is_file());
    };
    build_lib("0.0f");
    // The executable names libscale.so (DT_NEEDED) and finds it through its run path.
    nvcc_text(
        d,
        "app",
        APP,
        &["-arch=sm_90", "-L.", "-lscale", "-Xlinker", "-rpath=$ORIGIN"],
    );
    let libs = cgp_profile::profile::sass::shared_libraries(&d.join("app"), &Default::default());
    assert_eq!(
        libs,
        vec![d.join("libscale.so")],
        "only the project's library, not libc or cudart"
    );

    let spec = spec_target(d, "");
    let hash = |spec: &cgp_spec::spec::Spec, kernel: &str| {
        let t = &spec.targets[0];
        let f = cgp_profile::profile::sass::functions_of(t, &spec.base_dir()).unwrap();
        cgp_profile::profile::sass::hashes(&f, t, &t.sizes[0], "gpu", &[kernel])
            .get(kernel)
            .cloned()
    };
    let in_app = hash(&spec, "app_fill").expect("the executable's own kernel");
    let in_lib = hash(&spec, "lib_scale").expect("the library's kernel is hashed too");

    // A planted change to the library's kernel changes its hash, not the executable's kernel's.
    build_lib("1.0f");
    assert_ne!(hash(&spec, "lib_scale").unwrap(), in_lib);
    assert_eq!(hash(&spec, "app_fill").unwrap(), in_app);

    // `sass:` names the files to read instead: here the library alone, so the executable's
    // kernel has no hash (it would always be profiled).
    let only_lib = spec_target(d, "    sass: libscale.so\n");
    assert!(hash(&only_lib, "lib_scale").is_some());
    assert_eq!(hash(&only_lib, "app_fill"), None);
    // A `sass:` file that cannot be read is an error: every kernel of the target is profiled.
    let gone = spec_target(d, "    sass: [libscale.so, missing.so]\n");
    let t = &gone.targets[0];
    assert!(cgp_profile::profile::sass::functions_of(t, &gone.base_dir()).is_err());

    // JIT from PTX only: cuobjdump finds no SASS for the kernel, so it has no hash.
    nvcc_text(
        d,
        "libscale.so",
        &LIB.replace("PLANTED", "0.0f"),
        &[
            "-gencode=arch=compute_90,code=compute_90",
            "-shared",
            "-Xcompiler",
            "-fPIC",
        ],
    );
    assert_eq!(hash(&spec, "lib_scale"), None, "PTX only");
    assert_eq!(hash(&spec, "app_fill").unwrap(), in_app);
}
