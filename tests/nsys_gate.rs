//! `profiler: nsys` targets end to end: the example spec, its recordings (built from the real
//! captures in tests/fixtures/nsys-wild, see examples/nsys/make_recordings.py) and baselines,
//! spec errors, recording and replay of SQLite repetitions, and the live argv against the real
//! nsys.

use std::path::{Path, PathBuf};

use crate::support::root;
use serde_json::Value;

const NSYS: &str = "/usr/bin/nsys";

fn check(recording: &str, extra: &[&str]) -> (i32, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = crate::support::bin()
        .current_dir(root())
        .args([
            "check",
            "--spec",
            "examples/nsys/cgp-gate.yaml",
            "--baselines",
            "examples/nsys/baselines",
            "--replay",
        ])
        .arg(format!("examples/nsys/recordings/{recording}"))
        .arg("--json")
        .arg(&json)
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let v = serde_json::from_slice(&std::fs::read(&json).unwrap_or_default()).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), v, stderr)
}

fn row<'a>(r: &'a Value, target: &str, metric: &str) -> &'a Value {
    r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["target"] == target && x["metric"] == metric)
        .unwrap_or_else(|| panic!("no row {target} {metric}"))
}

#[test]
fn the_example_passes_against_its_own_baseline() {
    let (code, r, stderr) = check("main", &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(r["verdict"], "pass");
    assert_eq!(r["synthetic"], true, "the recording is labelled synthetic");
    // 4 + 5 spec metrics, plus one exact instance count per category/kernel metric (4 + 3).
    assert_eq!(r["rows"].as_array().unwrap().len(), 16);
    // The GPU busy time of the B200 capture: four disjoint intervals (22400 + 22208 + 2144 + 11649).
    let gpu = row(&r, "int8-gemm", "gpu_time");
    assert_eq!(gpu["candidate"]["median"].as_f64(), Some(58_401.0));
    // non_gpu_time: the session length nsys recorded (ANALYSIS_DETAILS.duration) minus that.
    let non = row(&r, "int8-gemm", "non_gpu_time");
    assert_eq!(
        non["candidate"]["median"].as_f64(),
        Some((1_671_707_461u64 - 58_401) as f64)
    );
    let inst = row(&r, "vllm-qwen3", "instances:category:gemm");
    assert_eq!(inst["threshold"]["kind"], "exact", "{inst}");
}

#[test]
fn a_category_that_grows_is_a_regression() {
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("c.md");
    let html = dir.path().join("r.html");
    let (code, r, stderr) = check(
        "pr-slowdown",
        &[
            "--markdown",
            md.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{stderr}");
    let regressions: Vec<(&str, &str)> = r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["verdict"] == "regression")
        .map(|x| (x["target"].as_str().unwrap(), x["metric"].as_str().unwrap()))
        .collect();
    // Only the GEMM kernels were slowed (by 12%): one category, the instance count unchanged.
    assert_eq!(regressions, [("vllm-qwen3", "category:gemm")]);
    assert_eq!(
        row(&r, "vllm-qwen3", "instances:category:gemm")["verdict"],
        "pass"
    );
    let md = std::fs::read_to_string(&md).unwrap();
    let html = std::fs::read_to_string(&html).unwrap();
    // Stacked bars of baseline against candidate, per nsys target x size.
    assert!(md.contains("GPU time by category"), "{md}");
    assert!(
        md.contains("`vllm-qwen3 default baseline`") && md.contains("`vllm-qwen3 default candidate`"),
        "{md}"
    );
    assert!(
        html.contains("class=\"stacked\""),
        "no stacked bars in the HTML report"
    );
    // The bars hold every category, gated or not: `triton` is not in the spec, yet it is in the
    // bars (from the baseline's and the candidate's own series), and no row judges it.
    let bars = r["category_bars"].as_array().expect("no category_bars");
    let vllm = bars.iter().find(|b| b["target"] == "vllm-qwen3").unwrap();
    let triton = vllm["categories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "triton")
        .expect("no triton in the bars");
    assert!(triton["baseline_ns"].as_f64().unwrap() > 0.0);
    assert_eq!(
        triton["baseline_ns"], triton["candidate_ns"],
        "only the GEMMs were slowed"
    );
    let gemm = vllm["categories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "gemm")
        .unwrap();
    assert_eq!(
        gemm["candidate_ns"].as_f64(),
        row(&r, "vllm-qwen3", "category:gemm")["candidate"]["median"].as_f64()
    );
    assert!(
        !r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["metric"] == "category:triton")
    );
    assert!(md.contains("medians of every category, gated or not"), "{md}");
    assert!(md.contains("🟪 triton"), "{md}");
    assert!(html.contains("medians of every category, gated or not"));
}

fn spec_error(yaml: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, yaml).unwrap();
    let out = crate::support::bin()
        .args(["validate", "--spec"])
        .arg(&p)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "accepted:\n{yaml}");
    String::from_utf8_lossy(&out.stderr).replace(&format!("{}", p.display()), "s.yaml")
}

#[test]
fn spec_errors_point_at_the_node() {
    let head = "version: 1\ntargets:\n  - name: w\n    command: [./w]\n";
    let e = spec_error(&format!(
        "{head}    profiler: nsys\n    metrics:\n      category:gem: \"5%\"\n"
    ));
    assert!(
        e.contains("s.yaml:7:7: no category rule gives `gem`") && e.contains("did you mean `category:gemm`"),
        "{e}"
    );
    let e = spec_error(&format!(
        "{head}    profiler: nsys\n    metrics:\n      kernel:(oops: \"5%\"\n"
    ));
    assert!(e.contains("s.yaml:7:7: invalid regex in `kernel:(oops`"), "{e}");
    let e = spec_error(&format!(
        "{head}    profiler: nsys\n    metrics:\n      gpu__time_duration.sum: \"5%\"\n"
    ));
    assert!(e.contains("is not a metric of an nsys target"), "{e}");
    let e = spec_error(&format!(
        "{head}    categories: {{a: b}}\n    metrics:\n      gpu__time_duration.sum: \"5%\"\n"
    ));
    assert!(
        e.contains("s.yaml:5:5: `categories` of target `w` only applies to `profiler: nsys` targets, and this is an ncu target"),
        "{e}"
    );
    let e = spec_error(&format!(
        "{head}    profiler: nsight\n    metrics:\n      gpu_time: \"5%\"\n"
    ));
    assert!(e.contains("s.yaml:5:15"), "{e}");
    // A category the user's rules give is known.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.yaml");
    std::fs::write(
        &p,
        format!("{head}    profiler: nsys\n    categories: {{\"mine\": custom}}\n    metrics:\n      category:custom: \"5%\"\n"),
    )
    .unwrap();
    crate::support::bin()
        .args(["validate", "--spec"])
        .arg(&p)
        .assert()
        .success();
}

#[test]
fn keys_of_the_other_profiler_are_refused_not_ignored() {
    let head = "version: 1\ntargets:\n  - name: w\n    command: [./w]\n    profiler: nsys\n";
    let metrics = "    metrics:\n      gpu_time: \"5%\"\n";
    // Every ncu-only key on an nsys target: exit 2 at the key, with what to do instead.
    for (line, want_help) in [
        ("kernel: gemm", "`kernel:<regex>` metric"),
        ("nvtx: [step]", "nsys traces every kernel"),
        ("launch_skip: 2", "nsys traces every kernel"),
        ("launch_count: 1", "nsys traces every kernel"),
        ("clock_control: base", "nsys does not lock clocks"),
        ("cache_control: none", "replays nothing"),
        ("replay_mode: application", "replays nothing"),
        ("flops: \"2*1\"", "ncu's kernel duration"),
        ("bytes: \"8\"", "ncu's kernel duration"),
    ] {
        let key = line.split(':').next().unwrap();
        let e = spec_error(&format!("{head}    {line}\n{metrics}"));
        assert!(
            e.contains(&format!(
                "s.yaml:6:5: `{key}` of target `w` only applies to Nsight Compute (`profiler: ncu`) targets, and this is a `profiler: nsys` target"
            )) && e.contains(want_help),
            "{line}: {e}"
        );
    }
    // `clocks: ncu` means "ncu locks them": nothing would lock them for nsys.
    let e = spec_error(&format!("{head}    clocks: ncu\n{metrics}"));
    assert!(
        e.contains("s.yaml:6:13: `clocks: ncu` of target `w`") && e.contains("clocks: nvml-base"),
        "{e}"
    );
    // In `defaults:`, a key is for the targets that read it: a mixed spec is fine ...
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.yaml");
    std::fs::write(
        &p,
        "version: 1\ndefaults:\n  kernel: gemm\n  categories: {\"x\": mine}\n  repetitions: 3\ntargets:\n  - name: k\n    command: [./k]\n    metrics:\n      gpu__time_duration.sum: \"5%\"\n  - name: w\n    command: [./w]\n    profiler: nsys\n    metrics:\n      category:mine: \"5%\"\n",
    )
    .unwrap();
    let out = crate::support::bin()
        .args(["validate", "--spec"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // ... but a default no target reads would be ignored silently: an error at the key.
    let e = spec_error(
        "version: 1\ndefaults:\n  profiler: nsys\n  clock_control: base\ntargets:\n  - name: w\n    command: [./w]\n    metrics:\n      gpu_time: \"5%\"\n",
    );
    assert!(
        e.contains("s.yaml:4:3: `clock_control` in `defaults` only applies to Nsight Compute (`profiler: ncu`) targets, and the spec has none"),
        "{e}"
    );
    let e = spec_error(
        "version: 1\ndefaults:\n  categories: {\"x\": mine}\ntargets:\n  - name: k\n    command: [./k]\n    metrics:\n      gpu__time_duration.sum: \"5%\"\n",
    );
    assert!(
        e.contains("s.yaml:3:3: `categories` in `defaults` only applies to `profiler: nsys` targets, and the spec has none"),
        "{e}"
    );
}

#[test]
fn profile_dry_run_prints_each_targets_own_profiler_argv() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.yaml");
    std::fs::write(
        &spec,
        "version: 1\ntargets:\n  - name: whole\n    profiler: nsys\n    command: [./app, --n, \"{n}\"]\n    sizes: [{n: 4}]\n    repetitions: 2\n    metrics:\n      gpu_time: \"5%\"\n  - name: one\n    command: [./bench]\n    kernel: gemm\n    repetitions: 2\n    metrics:\n      gpu__time_duration.sum: \"5%\"\n",
    )
    .unwrap();
    let out = crate::support::bin()
        .args(["profile", "--dry-run", "--spec"])
        .arg(&spec)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = |target: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{target}[")))
            .unwrap_or_else(|| panic!("no line for {target}: {text}"))
            .to_owned()
    };
    // The argv a live repetition runs, from the same function (the real nsys 2022.4.2 accepts
    // it: the_real_nsys_accepts_the_live_argv).
    let live = cgp_profile::profile::nsys::nsys_profile_args(Path::new("<tmp>/run-N"));
    let live: Vec<String> = live.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    assert_eq!(
        line("whole"),
        format!(
            "whole[n=4] x2: nsys {} ./app --n 4",
            shlex::try_join(live.iter().map(String::as_str)).unwrap()
        )
    );
    assert!(line("whole").contains("nsys profile --trace cuda"), "{text}");
    assert!(!line("whole").contains("--metrics"), "{text}");
    let ncu = line("one");
    assert!(
        ncu.starts_with("one[default] x2: ncu ") && ncu.contains("--metrics"),
        "{ncu}"
    );
}

#[test]
fn summary_recordings_cannot_give_gpu_time() {
    // A spec asking gpu_time of the kern_sum recording: a bad recording (exit 2), never a pass.
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.yaml");
    std::fs::write(
        &spec,
        "version: 1\ntargets:\n  - name: vllm-qwen3\n    profiler: nsys\n    command: [x]\n    repetitions: 3\n    metrics:\n      gpu_time: \"5%\"\n",
    )
    .unwrap();
    let out = crate::support::bin()
        .arg("check")
        .arg("--spec")
        .arg(&spec)
        .arg("--baselines")
        .arg(dir.path().join("b"))
        .arg("--allow-no-baselines")
        .arg("--replay")
        .arg(root().join("examples/nsys/recordings/main"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("needs the GPU busy time") && e.contains("0.csv"),
        "{e}"
    );
}

#[test]
fn sqlite_repetitions_record_and_replay() {
    use cgp_profile::profile::record::{Recorder, rep_path_sqlite};
    use cgp_profile::profile::replay::ReplayProfiler;
    use cgp_profile::profile::{Capture, Job, Output, Profiler};
    let spec = cgp_spec::spec::load(&root().join("examples/nsys/cgp-gate.yaml")).unwrap();
    let t = spec.target("int8-gemm").unwrap();
    let job = Job {
        target: t,
        size: &t.sizes[0],
        rep: 0,
    };
    let bytes =
        std::fs::read(root().join("tests/fixtures/nsys-wild/13_b200_export_2025.5.2.sqlite")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut rec = Recorder::new(dir.path()).unwrap();
    let capture = Capture {
        output: Output::Bytes(bytes.clone()),
        origin: PathBuf::from("run-0.sqlite"),
        argv: Some(vec!["nsys".into()]),
        wall_seconds: Some(2.0),
        exit_code: Some(0),
        output_tail: String::new(),
        kernels_seen: None,
        tool_version: None,
    };
    rec.record(job, &capture).unwrap();
    let fp = cgp_profile::gpu::fingerprint(None, 0, "test", &t.profiling, &t.clocks);
    rec.finish(&spec.hash, "test", &fp).unwrap();
    let path = rep_path_sqlite(dir.path(), "int8-gemm", "default", 0);
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    let mut replay = ReplayProfiler::open(dir.path()).unwrap();
    assert!(replay.has(job));
    let back = replay.capture(job).unwrap();
    assert_eq!(back.output, Output::Bytes(bytes.clone()));
    let samples = cgp_profile::profile::extract::extract(job, &back).unwrap();
    let gpu = samples
        .series
        .values()
        .find(|s| s.key.metric == "gpu_time")
        .unwrap();
    assert_eq!(gpu.values(), [58_401.0]);
    assert_eq!(gpu.unit, "ns");
    // A CSV repetition recorded later replaces the SQLite one (one file per repetition).
    let csv = std::fs::read_to_string(
        root().join("tests/fixtures/nsys-wild/12_b200_cuda_gpu_trace_nvtxname_2025.5.2.csv"),
    )
    .unwrap();
    let mut rec = Recorder::new(dir.path()).unwrap();
    rec.record(
        job,
        &Capture {
            output: Output::Text(csv),
            ..capture
        },
    )
    .unwrap();
    rec.finish(&spec.hash, "test", &fp).unwrap();
    assert!(!path.exists());
    let mut replay = ReplayProfiler::open(dir.path()).unwrap();
    let back = replay.capture(job).unwrap();
    assert!(matches!(back.output, Output::Text(_)));
}

#[test]
fn the_real_nsys_accepts_the_live_argv() {
    // One real nsys at a time (`support::real_nsys_turn`).
    let _turn = crate::support::real_nsys_turn();
    if !Path::new(NSYS).exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{NSYS} is missing under CI; .ci/setup must install nsight-systems"
        );
        eprintln!("\n!!! SKIPPED: {NSYS} is not installed; the live nsys argv was not checked !!!\n");
        return;
    }
    // Without a GPU nsys cannot trace, but it parses every option first: an application that
    // does not exist makes it stop right after, with its own message and exit 1 (an unknown
    // option would print `usage:` instead).
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.yaml");
    std::fs::write(
        &spec,
        "version: 1\ntargets:\n  - name: app\n    profiler: nsys\n    command: [/nonexistent/app, --n, \"{n}\"]\n    sizes: [{n: 4}]\n    repetitions: 2\n    timeout: 60s\n    metrics:\n      gpu_time: \"5%\"\n",
    )
    .unwrap();
    let out = crate::support::bin()
        .env("CGP_GATE_NSYS", NSYS)
        .env(crate::support::STAND_IN_GPU, crate::support::stand_in_gpu())
        .args(["profile", "--spec"])
        .arg(&spec)
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{e}");
    assert!(e.contains("No such file or directory: /nonexistent/app"), "{e}");
    assert!(!e.contains("usage:"), "nsys refused an option: {e}");
}

#[test]
fn the_real_nsys_traces_a_live_run_end_to_end() {
    // One real nsys at a time (`support::real_nsys_turn`).
    let _turn = crate::support::real_nsys_turn();
    if !Path::new(NSYS).exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{NSYS} is missing under CI; .ci/setup must install nsight-systems"
        );
        eprintln!("\n!!! SKIPPED: {NSYS} is not installed; the live nsys run was not checked !!!\n");
        return;
    }
    // A live repetition with the real nsys 2022.4.2, without a GPU: nsys traces /bin/true (no
    // CUDA work), its raw stream becomes a report and the report an SQLite export (cgp-gate
    // imports the stream itself where nsys cannot find its importer, as here), and the export
    // is read: it has no GPU activity, which is the error, naming the repetition's export.
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.yaml");
    std::fs::write(
        &spec,
        "version: 1\ntargets:\n  - name: app\n    profiler: nsys\n    command: [/bin/true]\n    repetitions: 2\n    timeout: 120s\n    metrics:\n      gpu_time: \"5%\"\n",
    )
    .unwrap();
    let out = crate::support::bin()
        .env("CGP_GATE_NSYS", NSYS)
        .env(crate::support::STAND_IN_GPU, crate::support::stand_in_gpu())
        // The export the error cites is kept (issue 34), in the run's kept folder (issue 59):
        // here, not in ~/.cache.
        .env("TMPDIR", dir.path())
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .args(["profile", "--spec"])
        .arg(&spec)
        .timeout(std::time::Duration::from_secs(400))
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{e}");
    assert!(
        e.contains("app[default] rep 0: ")
            // The export is kept where the error can cite it (issue 34): not the deleted run-0.sqlite.
            && e.contains(&format!("{}/cgp-gate/kept/", dir.path().join("cache").display()))
            && e.contains("app-default-rep0.sqlite: is an nsys export without CUDA GPU activity"),
        "{e}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("(nsys 20"),
        "the nsys version is reported: {stdout}"
    );
}

#[test]
fn the_example_spec_matches_the_json_schema() {
    let out = crate::support::bin().arg("schema").output().unwrap();
    let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let doc: Value =
        yaml_serde::from_str(&std::fs::read_to_string(root().join("examples/nsys/cgp-gate.yaml")).unwrap())
            .unwrap();
    let errors: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let bad: Value = yaml_serde::from_str(
        "version: 1\ntargets:\n  - name: w\n    command: [x]\n    profiler: nsys\n    metrics: {gpu_tim: \"5%\"}\n",
    )
    .unwrap();
    assert!(!v.is_valid(&bad));
    // The other profiler's keys on a target that names its profiler, as `validate` refuses them.
    let head = "version: 1\ntargets:\n  - name: w\n    command: [x]\n";
    for (yaml, ok) in [
        ("    profiler: nsys\n    kernel: gemm\n", false),
        ("    profiler: nsys\n    clocks: ncu\n", false),
        ("    profiler: nsys\n    clocks: nvml-base\n", true),
        ("    profiler: ncu\n    categories: {a: b}\n", false),
        ("    profiler: ncu\n    kernel: gemm\n", true),
    ] {
        let doc: Value = yaml_serde::from_str(&format!("{head}{yaml}")).unwrap();
        assert_eq!(v.is_valid(&doc), ok, "{yaml}");
    }
}

#[test]
fn an_ncu_baseline_never_compares_with_an_nsys_run() {
    // The example's baselines, as if ncu had measured them (what every baseline written before
    // the fingerprint named its profiler reads as): the nsys run is refused, even with a spec
    // whose `fingerprint_fields` leave the profiler out.
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("baselines/unknown-gpu");
    std::fs::create_dir_all(&base).unwrap();
    for t in ["int8-gemm", "vllm-qwen3"] {
        let mut b: Value = serde_json::from_str(
            &std::fs::read_to_string(root().join(format!("examples/nsys/baselines/unknown-gpu/{t}.json")))
                .unwrap(),
        )
        .unwrap();
        assert_eq!(b["fingerprint"]["profiler"], "nsys");
        let fp = b["fingerprint"].as_object_mut().unwrap();
        fp.remove("profiler");
        fp.remove("profiler_version");
        fp.insert("ncu_version".into(), "2022.3.0.0".into());
        std::fs::write(base.join(format!("{t}.json")), b.to_string()).unwrap();
    }
    let spec = dir.path().join("s.yaml");
    let text = std::fs::read_to_string(root().join("examples/nsys/cgp-gate.yaml"))
        .unwrap()
        .replace("categories: categories.yaml", "categories: CATS")
        .replace(
            "version: 1\n",
            "version: 1\nsettings:\n  fingerprint_fields: [gpu_name]\n",
        );
    let text = text.replace(
        "CATS",
        &root().join("examples/nsys/categories.yaml").display().to_string(),
    );
    std::fs::write(&spec, text).unwrap();
    let out = crate::support::bin()
        .args(["check", "--spec"])
        .arg(&spec)
        .arg("--baselines")
        .arg(dir.path().join("baselines"))
        .arg("--replay")
        .arg(root().join("examples/nsys/recordings/main"))
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{e}");
    assert!(
        e.contains("measured with `ncu`, this run measures with `nsys`"),
        "{e}"
    );
}

/// `profiler: nsys` on every file of tests/fixtures/nsys-wild: a recording whose two repetitions
/// are copies of the file (SYNTHETIC repetitions of a real capture) replays to the same category
/// and kernel times as `breakdown` gives for the file; the files that hold no GPU activity are
/// refused with exit 2 naming the recorded file.
#[test]
fn profiler_nsys_reads_every_real_file() {
    let wild = root().join("tests/fixtures/nsys-wild");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&wild)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x != "md"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 7, "{files:?}");
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let ext = if name.ends_with(".sqlite") {
            "sqlite"
        } else {
            "csv"
        };
        let trace = name.contains("gpu_trace") || ext == "sqlite";
        let dir = tempfile::tempdir().unwrap();
        let rec = dir.path().join("rec/w/default");
        std::fs::create_dir_all(&rec).unwrap();
        for rep in 0..2 {
            std::fs::copy(f, rec.join(format!("{rep}.{ext}"))).unwrap();
        }
        let spec = dir.path().join("s.yaml");
        std::fs::write(
            &spec,
            format!(
                "version: 1\ntargets:\n  - name: w\n    profiler: nsys\n    command: [x]\n    repetitions: 2\n    metrics:\n      category:gemm: \"5%\"\n      kernel:.: \"5%\"\n{}",
                if trace { "      gpu_time: \"5%\"\n" } else { "" }
            ),
        )
        .unwrap();
        let out = crate::support::bin()
            .args(["profile", "--json", "--spec"])
            .arg(&spec)
            .arg("--replay")
            .arg(dir.path().join("rec"))
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&out.stderr);
        if name.contains("EMPTY") || name.contains("api_sum") {
            assert_eq!(out.status.code(), Some(2), "{name}: {e}");
            assert!(e.contains("0.csv"), "{name}: {e}");
            continue;
        }
        assert_eq!(out.status.code(), Some(0), "{name}: {e}");
        let series: Value = serde_json::from_slice(&out.stdout).unwrap();
        let value = |metric: &str| -> Vec<f64> {
            series
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["metric"] == metric)
                .unwrap_or_else(|| panic!("{name}: no {metric}"))["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect()
        };
        // What `breakdown` says of the same file.
        let json = dir.path().join("b.json");
        let b = crate::support::bin()
            .args([
                "breakdown".as_ref(),
                f.as_os_str(),
                "--json".as_ref(),
                json.as_os_str(),
            ])
            .output()
            .unwrap();
        assert!(b.status.success(), "{name}");
        let run: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let run = &run["runs"][0];
        let gemm = run["categories"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "gemm")
            .map_or(0.0, |c| c["time_ns"].as_f64().unwrap());
        let all: f64 = run["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["time_ns"].as_f64().unwrap())
            .sum();
        assert_eq!(value("category:gemm"), [gemm, gemm], "{name}");
        assert!(gemm > 0.0, "{name}: every real file here has GEMM kernels");
        assert_eq!(value("kernel:."), [all, all], "{name}");
        if trace {
            let gpu = run["gpu_time_ns"].as_f64().unwrap();
            assert_eq!(value("gpu_time"), [gpu, gpu], "{name}");
        }
    }
}

#[test]
fn validate_checks_no_ncu_metric_names_of_nsys_targets() {
    // `kernel:<regex>` of an nsys target is no ncu metric, even with `__` in it: `validate` sends
    // only ncu targets' metrics to `ncu --query-metrics`, and says nothing of ncu without them.
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.yaml");
    std::fs::write(
        &spec,
        "version: 1\ntargets:\n  - name: w\n    profiler: nsys\n    command: [./w]\n    metrics:\n      kernel:flash__fwd: \"5%\"\n",
    )
    .unwrap();
    let out = crate::support::bin()
        .env("CGP_GATE_CHIP", "gh100")
        .args(["validate", "--spec"])
        .arg(&spec)
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{e}");
    assert!(!e.contains("metric names"), "{e}");
}
