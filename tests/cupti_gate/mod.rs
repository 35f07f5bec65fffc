//! `profiler: cupti` targets end to end: spec errors, `profile --dry-run`, the live path up to the
//! GPU (a real nvcc-built program, the real CUDA driver library and libcupti, no GPU: CUPTI's own
//! error, exit 3), and record/replay of trace files (SYNTHETIC traces written here in the
//! injection library's format, tests/fixtures/cupti/README.md): A/A, a planted +10%, exact
//! launch-configuration rows, the kernel filter, `launch_skip`/`launch_count`, `kernels: sum`,
//! every failure of a trace, and a cupti baseline never compared with an ncu one.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::support;
use crate::support::root;

mod spec_and_setup;

/// One kernel launch of a SYNTHETIC trace.
#[derive(Clone)]
pub(crate) struct Launch {
    pub(crate) name: &'static str,
    pub(crate) mangled: &'static str,
    pub(crate) grid: [u32; 3],
    pub(crate) block: [u32; 3],
    pub(crate) regs: u32,
    pub(crate) ns: u64,
}

const VA: (&str, &str) = (
    "vector_add(const float*, const float*, float*, int)",
    "_Z10vector_addPKfS0_Pfi",
);
const FILL: (&str, &str) = ("fill(float*, int)", "_Z4fillPfi");

fn va(ns: u64) -> Launch {
    Launch {
        name: VA.0,
        mangled: VA.1,
        grid: [65536, 1, 1],
        block: [256, 1, 1],
        regs: 16,
        ns,
    }
}

fn fill(ns: u64) -> Launch {
    Launch {
        name: FILL.0,
        mangled: FILL.1,
        grid: [128, 1, 1],
        block: [128, 1, 1],
        regs: 8,
        ns,
    }
}

/// How a SYNTHETIC trace ends.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum End {
    Flushed,
    Died,
    Dropped(u64),
    Refused,
}

/// A trace file as the injection library writes it (docs/cupti.md, "Trace file format"): the
/// header, one line per kernel record, a failure line, the trailer. Launches are given in
/// launch order; CUPTI delivers them by buffer, so they are written with the last two swapped
/// (the reader orders them by correlation ID).
pub(crate) fn trace(launches: &[Launch], end: End) -> String {
    let mut s =
        String::from("{\"cgp_gate_cupti\":1,\"cupti_version\":18,\"kernel_record\":8,\"pid\":4242}\n");
    if end == End::Refused {
        s.push_str("{\"error\":\"cuptiActivityRegisterCallbacks\",\"code\":15,\"message\":\"CUPTI_ERROR_NOT_INITIALIZED\"}\n");
    }
    let mut lines = Vec::new();
    let mut t = 1_000_000u64;
    for (i, l) in launches.iter().enumerate() {
        lines.push(format!(
            "{{\"k\":{},\"m\":{},\"grid\":[{},{},{}],\"block\":[{},{},{}],\"regs\":{},\"smem_static\":0,\"smem_dynamic\":1024,\"start\":{},\"end\":{},\"device\":0,\"context\":1,\"stream\":7,\"corr\":{},\"graph\":0}}\n",
            Value::from(l.name),
            Value::from(l.mangled),
            l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
            l.regs,
            t,
            t + l.ns,
            i + 1
        ));
        t += l.ns + 5_000;
    }
    if lines.len() >= 2 {
        let n = lines.len();
        lines.swap(n - 1, n - 2);
    }
    if end == End::Died {
        lines.truncate(lines.len() / 2);
    }
    let records = lines.len();
    s.extend(lines);
    match end {
        End::Died => {}
        End::Dropped(n) => s.push_str(&format!("{{\"end\":1,\"records\":{records},\"dropped\":{n}}}\n")),
        _ => s.push_str(&format!("{{\"end\":1,\"records\":{records},\"dropped\":0}}\n")),
    }
    s
}

/// SYNTHETIC noise: a deterministic value in [-1, 1) from a seed (splitmix64).
fn noise(seed: u64) -> f64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// One process of the example program: 30 `vector_add` launches of about `ns` (±0.5%, the first
/// one 5% slower, a warm-up), each after a `fill` launch the spec's filter leaves out.
pub(crate) fn process(seed: u64, ns: f64, regs: u32) -> Vec<Launch> {
    let mut out = Vec::new();
    for i in 0..30u64 {
        out.push(fill(2_000));
        let warm = if i == 0 { 1.05 } else { 1.0 };
        let v = ns * warm * (1.0 + 0.005 * noise(seed * 1000 + i));
        out.push(Launch {
            regs,
            ..va(v.round() as u64)
        });
    }
    out
}

/// Write a SYNTHETIC recording of target `va` (size `default`): one trace per repetition.
fn recording(dir: &Path, traces: &[String]) {
    let reps = dir.join("va/default");
    std::fs::create_dir_all(&reps).unwrap();
    let mut runs = Vec::new();
    for (i, t) in traces.iter().enumerate() {
        std::fs::write(reps.join(format!("{i}.cupti")), t).unwrap();
        runs.push(serde_json::json!({"target": "va", "size": "default", "rep": i, "argv": ["./vector_add"], "exit_code": 0, "wall_seconds": 0.5}));
    }
    let manifest = serde_json::json!({
        "schema_version": 1,
        "synthetic": true,
        "note": "SYNTHETIC CUPTI traces written by tests/cupti_gate/mod.rs",
        "cupti_version": "2022.3.0",
        "runs": runs,
    });
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
}

pub(crate) const SPEC: &str = "version: 1\ntargets:\n  - name: va\n    command: [./vector_add]\n    profiler: cupti\n    kernel: regex:vector_add\n    repetitions: 1\n    max_repetitions: 1\n    baseline_repetitions: 5\n    metrics:\n      gpu__time_duration.sum: \"5%\"\n      launch__registers_per_thread: exact\n      launch__grid_size: {exact: true, direction: lower}\n";

struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    fn new(spec: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.yaml"), spec).unwrap();
        Self { dir }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    fn cmd(&self, args: &[&str]) -> (i32, String, String) {
        let out = crate::support::bin()
            .current_dir(self.dir.path())
            .env(crate::support::STAND_IN_GPU, crate::support::stand_in_gpu())
            .args(args)
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// `check --replay REC --json r.json` against the baselines in `b/`.
    fn check(&self, rec: &str) -> (i32, Value, String) {
        let (code, _, err) = self.cmd(&[
            "check",
            "--spec",
            "s.yaml",
            "--baselines",
            "b",
            "--replay",
            rec,
            "--json",
            "r.json",
        ]);
        let v = serde_json::from_slice(&std::fs::read(self.path("r.json")).unwrap_or_default())
            .unwrap_or(Value::Null);
        (code, v, err)
    }

    fn baseline(&self, rec: &str) {
        let (code, _, err) = self.cmd(&[
            "baseline",
            "update",
            "--spec",
            "s.yaml",
            "--baselines",
            "b",
            "--replay",
            rec,
        ]);
        assert_eq!(code, 0, "{err}");
    }
}

fn row<'a>(r: &'a Value, metric: &str) -> &'a Value {
    r["rows"]
        .as_array()
        .unwrap_or_else(|| panic!("no rows in {r}"))
        .iter()
        .find(|x| x["metric"] == metric)
        .unwrap_or_else(|| panic!("no row {metric} in {r}"))
}

/// A baseline of 5 processes, then candidates of one process each.
fn with_baseline(spec: &str) -> Case {
    let c = Case::new(spec);
    let base: Vec<String> = (0..5)
        .map(|s| trace(&process(s, 73_000.0, 16), End::Flushed))
        .collect();
    recording(&c.path("base"), &base);
    c.baseline("base");
    c
}

#[test]
fn a_a_passes_and_a_planted_ten_percent_is_found_at_one_process_per_row() {
    let c = with_baseline(SPEC);
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(c.path("b/unknown-gpu/va.json")).unwrap()).unwrap();
    assert_eq!(stored["fingerprint"]["profiler"], "cupti");
    assert_eq!(stored["fingerprint"]["profiler_version"], "2022.3.0");

    recording(&c.path("aa"), &[trace(&process(77, 73_000.0, 16), End::Flushed)]);
    let (code, r, err) = c.check("aa");
    assert_eq!(code, 0, "{err}");
    let time = row(&r, "gpu__time_duration.sum");
    assert_eq!(time["verdict"], "pass", "{time}");
    assert_eq!(time["kernel"], "vector_add", "{time}");
    // 30 launches, the warm-up dropped: 29 samples from the one process.
    assert_eq!(time["candidate"]["n"], 29, "{time}");
    assert_eq!(row(&r, "launch__registers_per_thread")["verdict"], "pass");
    assert_eq!(row(&r, "launch__grid_size")["verdict"], "pass");
    // The filter left `fill` out: no row of it.
    assert!(
        !r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["kernel"] == "fill"),
        "{r}"
    );

    recording(
        &c.path("slow"),
        &[trace(&process(78, 73_000.0 * 1.10, 16), End::Flushed)],
    );
    let (code, r, err) = c.check("slow");
    assert_eq!(code, 1, "{err}");
    let time = row(&r, "gpu__time_duration.sum");
    assert_eq!(time["verdict"], "regression", "{time}");
    let change = time["change"].as_f64().unwrap();
    assert!((0.08..0.12).contains(&change), "{change}");
    assert_eq!(row(&r, "launch__registers_per_thread")["verdict"], "pass");
}

#[test]
fn launch_configuration_rows_are_compared_exactly() {
    let c = with_baseline(SPEC);
    recording(
        &c.path("regs"),
        &[trace(&process(79, 73_000.0, 17), End::Flushed)],
    );
    let (code, r, err) = c.check("regs");
    assert_eq!(code, 1, "{err}");
    let regs = row(&r, "launch__registers_per_thread");
    assert_eq!(regs["verdict"], "regression", "{regs}");
    assert_eq!(row(&r, "gpu__time_duration.sum")["verdict"], "pass");
}

#[test]
fn a_cupti_baseline_is_never_compared_with_an_ncu_one() {
    // The same baseline as if ncu had measured it: the cupti run is refused, even with a spec
    // whose `fingerprint_fields` leave the profiler out.
    let spec = SPEC.replace(
        "version: 1\n",
        "version: 1\nsettings:\n  fingerprint_fields: [gpu_name]\n",
    );
    let c = with_baseline(&spec);
    let path = c.path("b/unknown-gpu/va.json");
    let mut b: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    b["fingerprint"]["profiler"] = "ncu".into();
    b["fingerprint"]["profiler_version"] = "2022.3.0.0".into();
    b["fingerprint"]["ncu_version"] = "2022.3.0.0".into();
    std::fs::write(&path, b.to_string()).unwrap();
    recording(&c.path("aa"), &[trace(&process(77, 73_000.0, 16), End::Flushed)]);
    let (code, _, err) = c.check("aa");
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("measured with `ncu`, this run measures with `cupti`"),
        "{err}"
    );
    // Issue 44: --allow-fingerprint-mismatch never crosses profilers (it passed, exit 0, with
    // nothing on the console).
    let (code, _, err) = c.cmd(&[
        "check",
        "--spec",
        "s.yaml",
        "--baselines",
        "b",
        "--replay",
        "aa",
        "--allow-fingerprint-mismatch",
    ]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("does not cross profilers"), "{err}");
    // A cupti `baseline update` over the ncu file starts the history afresh: the ncu
    // generation is not kept in any entry's history.
    c.baseline("aa");
    let b: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(b["fingerprint"]["profiler"], "cupti");
    for e in b["entries"].as_array().unwrap() {
        assert_eq!(e["history"].as_array().unwrap().len(), 1, "{e}");
    }
}

/// `profile --replay REC --json` of `spec`: the series.
pub(crate) fn profile(spec: &str, traces: &[String]) -> (i32, Value, String) {
    let c = Case::new(spec);
    recording(&c.path("rec"), traces);
    let (code, out, err) = c.cmd(&["profile", "--spec", "s.yaml", "--replay", "rec", "--json"]);
    (code, serde_json::from_str(&out).unwrap_or(Value::Null), err)
}

fn values(series: &Value, metric: &str) -> Vec<f64> {
    series
        .as_array()
        .unwrap_or_else(|| panic!("{series}"))
        .iter()
        .find(|s| s["metric"] == metric)
        .unwrap_or_else(|| panic!("no {metric} in {series}"))["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

#[test]
fn filters_and_launch_ranges_select_launches_as_ncu_does() {
    // Launch i of vector_add takes 1000 + i ns; `fill` runs before each.
    let launches: Vec<Launch> = (0..10u64).flat_map(|i| [fill(500), va(1000 + i)]).collect();
    let t = trace(&launches, End::Flushed);
    let spec = |extra: &str| {
        format!(
            "version: 1\ntargets:\n  - name: va\n    command: [./vector_add]\n    profiler: cupti\n    repetitions: 1\n{extra}    metrics:\n      gpu__time_duration.sum: \"5%\"\n"
        )
    };
    // The exact name matches the function name; skip 2, count 5, then the warm-up launch goes.
    let (code, s, err) = profile(
        &spec("    kernel: vector_add\n    launch_skip: 2\n    launch_count: 5\n"),
        std::slice::from_ref(&t),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        values(&s, "gpu__time_duration.sum"),
        [1003.0, 1004.0, 1005.0, 1006.0]
    );
    // A regex matches the demangled name; the range counts only the launches it selects.
    let (code, s, err) = profile(
        &spec("    kernel: regex:^fill\\(\n    launch_count: 3\n    warmup: 0\n"),
        std::slice::from_ref(&t),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(values(&s, "gpu__time_duration.sum"), [500.0, 500.0, 500.0]);
    // `^vector_add<` matches nothing: the error lists the kernels that ran.
    let (code, _, err) = profile(
        &spec("    kernel: regex:^vector_add<\n"),
        std::slice::from_ref(&t),
    );
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("matched nothing") && err.contains("`fill(float*, int)`"),
        "{err}"
    );
    // `kernels: sum`: one operation row, both kernels of each iteration summed.
    let (code, s, err) = profile(
        &spec("    kernel: regex:.\n    kernels: sum\n    warmup: 0\n"),
        &[t],
    );
    assert_eq!(code, 0, "{err}");
    let sums = values(&s, "gpu__time_duration.sum");
    assert_eq!(sums.len(), 10);
    assert_eq!(vec![sums[0], sums[9]], [1500.0, 1509.0]);
}

#[test]
fn every_incomplete_trace_is_a_clear_failure_naming_cupti() {
    let launches = process(1, 73_000.0, 16);
    for (end, code, want) in [
        (
            End::Refused,
            3,
            "CUPTI refused to start: cuptiActivityRegisterCallbacks returned CUPTI_ERROR_NOT_INITIALIZED",
        ),
        (End::Died, 3, "CUPTI: the program died before the flush at exit"),
        (End::Dropped(12), 3, "CUPTI dropped 12 activity record(s)"),
    ] {
        let (got, _, err) = profile(SPEC, &[trace(&launches, end)]);
        assert_eq!(got, code, "{err}");
        assert!(err.contains(want), "{err}");
    }
    // A damaged line of a recording is invalid input: exit 2, naming the line (the first
    // `vector_add` record, line 3).
    let mut t = trace(&launches, End::Flushed);
    t = t.replacen("\"regs\":16", "\"regs\":\"x\"", 1);
    let (got, _, err) = profile(SPEC, &[t]);
    assert_eq!(got, 2, "{err}");
    assert!(
        err.contains("CUPTI trace") && err.contains("line 3: not a JSON object"),
        "{err}"
    );
    // An empty trace: the program never initialised CUDA.
    let (got, _, err) = profile(SPEC, &[String::new()]);
    assert_eq!(got, 3, "{err}");
    assert!(err.contains("never initialised CUDA"), "{err}");
}

/// A duration no GPU gives (over a day, or none at all) is a damaged trace: exit 2 naming the
/// kernel, by the rule every reader applies (`measured::plausible`), never a sample.
#[test]
fn an_impossible_kernel_duration_is_damaged_input() {
    for (ns, want) in [(172_800_000_000_000u64, "longer than a day"), (0, "took 0 ns")] {
        let mut launches = process(1, 73_000.0, 16);
        let last = launches.len() - 1;
        launches[last].ns = ns;
        let (got, _, err) = profile(SPEC, &[trace(&launches, End::Flushed)]);
        assert_eq!(got, 2, "{ns}: {err}");
        assert!(
            err.contains("CUPTI: kernel `vector_add") && err.contains(want),
            "{ns}: {err}"
        );
    }
}

/// The live path up to the GPU: nvcc builds the example program, the real CUDA driver library
/// loads cgp-gate's injection library, which loads the real libcupti; with no GPU, CUPTI answers
/// `CUPTI_ERROR_NOT_INITIALIZED`, and `profile` and `check` end in exit 3 naming that error:
/// never a pass, never a hang (each command has 120 s).
#[test]
fn a_real_program_without_a_gpu_ends_in_cuptis_own_error() {
    let test = "cupti_gate::a_real_program_without_a_gpu_ends_in_cuptis_own_error";
    if Path::new("/dev/nvidia0").exists() {
        // On a GPU the run succeeds: scripts/validate-gpu.sh --part cupti measures it there.
        support::skip(test, "a GPU is present: this test is of the path without one");
        return;
    }
    if std::process::Command::new("nvcc")
        .arg("--version")
        .output()
        .is_err()
    {
        support::skip(test, "nvcc not installed (.ci/setup installs it)");
        return;
    }
    let c = Case::new(
        "version: 1\ntargets:\n  - name: va\n    command: [./vector_add, --n, \"4096\", --launches, \"3\"]\n    profiler: cupti\n    repetitions: 1\n    timeout: 60s\n    metrics:\n      gpu__time_duration.sum: \"5%\"\n      launch__registers_per_thread: exact\n",
    );
    let status = std::process::Command::new("nvcc")
        .args(["-O2", "-arch=sm_70", "-o"])
        .arg(c.path("vector_add"))
        .arg(root().join("examples/cuda/vector_add.cu"))
        .status()
        .unwrap();
    assert!(status.success(), "nvcc failed");
    let (code, _, err) = c.cmd(&["profile", "--spec", "s.yaml"]);
    if err.contains("no libcupti found") {
        support::skip(test, "libcupti not installed (.ci/setup installs libcupti 11.8)");
        return;
    }
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("CUPTI refused to start") && err.contains("CUPTI_ERROR_NOT_INITIALIZED"),
        "{err}"
    );
    let (code, out, err) = c.cmd(&[
        "check",
        "--spec",
        "s.yaml",
        "--baselines",
        "b",
        "--allow-no-baselines",
    ]);
    assert_eq!(code, 3, "{out}{err}");
    // The run's errors are in its report (stdout).
    assert!(
        out.contains("CUPTI refused to start") && out.contains("CUPTI_ERROR_NOT_INITIALIZED"),
        "{out}"
    );
    // Recorded, the failure replays as the same failure.
    let (code, _, err) = c.cmd(&["profile", "--spec", "s.yaml", "--record", "rec"]);
    assert_eq!(code, 3, "{err}");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(c.path("rec/manifest.json")).unwrap()).unwrap();
    assert!(
        manifest["cupti_version"].as_str().is_some_and(|v| !v.is_empty()),
        "{manifest}"
    );
    assert!(
        manifest["runs"][0]["argv"][0]
            .as_str()
            .unwrap()
            .starts_with("CUDA_INJECTION64_PATH="),
        "{manifest}"
    );
    assert!(c.path("rec/va/default/0.cupti").is_file());
    let (code, _, err) = c.cmd(&["profile", "--spec", "s.yaml", "--replay", "rec"]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("CUPTI_ERROR_NOT_INITIALIZED"), "{err}");
}

/// The SYNTHETIC ncu output of examples/recordings (examples/synthesize_recording.rs) for
/// `vector_add`: what ncu's one run of a size gives the why.
fn ncu_csv(recording: &str) -> String {
    std::fs::read_to_string(root().join(format!(
        "examples/recordings/{recording}/vector_add/n=16777216/0.csv"
    )))
    .unwrap()
}

#[test]
fn the_why_of_a_cupti_row_is_ncu_run_once_where_a_time_changed() {
    let spec = SPEC.replace("    metrics:\n", "    explain: remeasure\n    metrics:\n");
    let c = Case::new(&spec);
    let base: Vec<String> = (0..5)
        .map(|s| trace(&process(s, 73_000.0, 16), End::Flushed))
        .collect();
    recording(&c.path("base"), &base);
    // `baseline update` runs ncu once per size after the 5 cupti processes: repetition 5.
    std::fs::write(c.path("base/va/default/5.csv"), ncu_csv("main")).unwrap();
    c.baseline("base");
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(c.path("b/unknown-gpu/va.json")).unwrap()).unwrap();
    let counters = stored["counters"]
        .as_array()
        .unwrap_or_else(|| panic!("no counters: {stored}"));
    assert!(
        counters
            .iter()
            .any(|k| k["metric"] == "dram__bytes.sum" && k["kernel"] == "vector_add"),
        "{stored}"
    );

    // A/A: no time changed, so ncu does not run (its output would be repetition 1).
    recording(&c.path("aa"), &[trace(&process(77, 73_000.0, 16), End::Flushed)]);
    std::fs::write(c.path("aa/va/default/1.csv"), ncu_csv("pr-slowdown")).unwrap();
    let (code, r, err) = c.check("aa");
    assert_eq!(code, 0, "{err}");
    assert!(r["why_cost"].is_null(), "{r}");

    // +10%: ncu profiles the size once, the row says why, and the report says what it cost.
    recording(
        &c.path("slow"),
        &[trace(&process(78, 73_000.0 * 1.10, 16), End::Flushed)],
    );
    std::fs::write(c.path("slow/va/default/1.csv"), ncu_csv("pr-slowdown")).unwrap();
    let (code, r, err) = c.check("slow");
    assert_eq!(code, 1, "{err}");
    let time = row(&r, "gpu__time_duration.sum");
    assert_eq!(time["verdict"], "regression");
    assert!(
        time["why"]["compared"]
            .as_array()
            .is_some_and(|c| c.iter().any(|m| m == "dram__bytes.sum")),
        "{time}"
    );
    assert_eq!(r["why_cost"]["sizes"], 1, "{r}");
    assert!(err.contains("cupti: the why cost"), "{err}");
}

#[test]
fn a_hand_written_recording_of_two_configurations_is_two_series() {
    // tests/fixtures/cupti-replay/two-configs: SYNTHETIC, mangled names as CUPTI gives them.
    let c = Case::new(
        "version: 1\ntargets:\n  - name: mm\n    command: [./matmul]\n    profiler: cupti\n    kernel: regex:matmul_tiled<\n    warmup: 0\n    repetitions: 1\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n      launch__shared_mem_per_block_static: exact\n",
    );
    let rec = root().join("tests/fixtures/cupti-replay/two-configs");
    let (code, out, err) = c.cmd(&[
        "profile",
        "--spec",
        "s.yaml",
        "--replay",
        rec.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let series: Value = serde_json::from_str(&out).unwrap();
    let get = |kernel: &str, metric: &str| -> Vec<f64> {
        series
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["kernel"] == kernel && s["metric"] == metric)
            .unwrap_or_else(|| panic!("no {kernel} {metric} in {series}"))["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    let small = "void matmul_tiled<32> [grid (32, 32, 1) block (32, 32, 1)]";
    let large = "void matmul_tiled<32> [grid (64, 64, 1) block (16, 16, 1)]";
    assert_eq!(get(small, "gpu__time_duration.sum"), [250_000.0, 251_000.0]);
    assert_eq!(get(large, "gpu__time_duration.sum"), [400_000.0, 402_000.0]);
    assert_eq!(
        get(small, "launch__shared_mem_per_block_static"),
        [8192.0, 8192.0]
    );
    assert_eq!(
        get(large, "launch__shared_mem_per_block_static"),
        [2048.0, 2048.0]
    );
    // vector_add is not selected: 4 series in all.
    assert_eq!(series.as_array().unwrap().len(), 4, "{series}");
}
