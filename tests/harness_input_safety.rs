//! Round 5 of the hostile inputs (issue 58), the harness files' part: names from a file that
//! reached GitHub's workflow commands and the YAML `init` writes, zero times, two GPUs in one
//! recording, sidecars from outside the recording, Google Benchmark's repetitions, and a pytest
//! file without rounds. Every test runs the `cgp-gate` binary on files the SYNTHETIC stand-in
//! benchmark program `tests/standins/harness.py` writes in each harness's real format, edited
//! per test as an attacker or a careless user would (docs/reliability.md, round 5).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{bin, root};

/// Run the stand-in harness program once: `kind` is `nvbench` (`--json`, with `--jsonbin` when
/// `jsonbin`), `gbench` (3 repetitions) or `pytest`; `env` sets its knobs (CGP_STANDIN_GPU, ...).
pub(crate) fn standin(path: &Path, kind: &str, jsonbin: bool, env: &[(&str, &str)]) -> PathBuf {
    let mut c = std::process::Command::new("python3");
    c.arg(root().join("tests/standins/harness.py"));
    match kind {
        "nvbench" => {
            c.arg("--json").arg(path);
            if jsonbin {
                c.arg("--jsonbin");
            }
        }
        "gbench" => {
            c.arg(format!("--benchmark_out={}", path.display()))
                .arg("--benchmark_out_format=json")
                .arg("--benchmark_repetitions=3");
        }
        _ => {
            c.arg(format!("--benchmark-json={}", path.display()));
        }
    }
    for (k, v) in env {
        c.env(k, v);
    }
    assert!(c.status().unwrap().success(), "the stand-in failed");
    path.to_path_buf()
}

/// A spec of one harness target `t` of `profiler` gating `metric`.
fn spec(dir: &Path, profiler: &str, metric: &str) -> PathBuf {
    let p = dir.join("s.yaml");
    std::fs::write(
        &p,
        format!(
            "version: 1\ntargets:\n  - name: t\n    profiler: {profiler}\n    command: [bench]\n    repetitions: 3\n    metrics:\n      {metric}: \"5%\"\n"
        ),
    )
    .unwrap();
    p
}

/// The binary in `dir` with `args` and `env`: exit code, stdout, stderr.
pub(crate) fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut c = bin();
    c.current_dir(dir).args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn import(dir: &Path, into: &str, files: &[&Path]) -> (i32, String) {
    let mut args = vec!["import", "--spec", "s.yaml", "--into", into];
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    args.extend(names.iter().map(String::as_str));
    let (code, out, err) = run(dir, &args, &[]);
    (code, out + &err)
}

/// `baseline update --spec SPEC --replay REC --baselines STORE` in `dir`, which must pass.
pub(crate) fn update(dir: &Path, spec: &str, rec: &str, store: &str) {
    let (code, _, err) = run(
        dir,
        &[
            "baseline",
            "update",
            "--spec",
            spec,
            "--replay",
            rec,
            "--baselines",
            store,
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
}

/// `check --spec SPEC --replay REC --baselines STORE` in `dir` with `extra`: exit code, stdout,
/// stderr.
pub(crate) fn check(
    dir: &Path,
    spec: &str,
    rec: &str,
    store: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (i32, String, String) {
    let args = [
        &["check", "--spec", spec, "--replay", rec, "--baselines", store][..],
        extra,
    ]
    .concat();
    run(dir, &args, env)
}

fn paths(v: &[PathBuf]) -> Vec<&Path> {
    v.iter().map(PathBuf::as_path).collect()
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn write_json(path: &Path, v: &Value) {
    std::fs::write(path, v.to_string()).unwrap();
}

/// Item 1: a device name from an nvbench file reached the console's headline raw, so a line of a
/// GitHub Actions log began with `::stop-commands::` (the runner then ignored the annotations
/// after it) or `::error::` (a forged annotation on a passing run). Every line cgp-gate prints
/// that starts with `::` must be one of its own annotations, which carry properties.
#[test]
fn a_device_name_from_a_harness_file_never_becomes_a_workflow_command() {
    for name in [
        "RTX\n::stop-commands::pwnedtoken",
        "RTX\n::error::forged by the file",
        "RTX\r\n  ::add-mask::x",
    ] {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        spec(dir, "nvbench", "nv/cold/time/gpu");
        let gpu = [("CGP_STANDIN_GPU", name)];
        let slow = [("CGP_STANDIN_GPU", name), ("CGP_STANDIN_SLOWDOWN", "1.3")];
        let base: Vec<PathBuf> = (0..3)
            .map(|i| standin(&dir.join(format!("b{i}.json")), "nvbench", true, &gpu))
            .collect();
        let head: Vec<PathBuf> = (0..3)
            .map(|i| standin(&dir.join(format!("h{i}.json")), "nvbench", true, &slow))
            .collect();
        assert_eq!(import(dir, "base", &paths(&base)).0, 0);
        assert_eq!(import(dir, "head", &paths(&head)).0, 0);
        update(dir, "s.yaml", "base", "bl");
        std::fs::write(dir.join("summary.md"), "").unwrap();
        std::fs::write(dir.join("outputs.txt"), "").unwrap();
        for (rec, want) in [("base", 0), ("head", 1)] {
            let (code, out, err) = check(
                dir,
                "s.yaml",
                rec,
                "bl",
                &[],
                &[
                    ("GITHUB_ACTIONS", "true"),
                    ("GITHUB_STEP_SUMMARY", dir.join("summary.md").to_str().unwrap()),
                    ("GITHUB_OUTPUT", dir.join("outputs.txt").to_str().unwrap()),
                ],
            );
            assert_eq!(code, want, "{name:?} {rec}: {out}{err}");
            for line in out.lines().chain(err.lines()) {
                let l = line.trim_start();
                if l.starts_with("::") {
                    assert!(
                        ["::error ", "::warning ", "::notice "]
                            .iter()
                            .any(|own| l.starts_with(own)),
                        "{name:?} {rec}: a workflow command from the file's device name: {line:?}\n{out}{err}"
                    );
                }
            }
            if want == 1 {
                assert!(out.contains("::error "), "the regression's annotation: {out}");
            }
        }
    }
}

/// Item 1, the benchmark's name: `parse` printed each entry's key raw, one line per metric.
#[test]
fn a_benchmark_name_from_a_harness_file_never_starts_a_line_of_parse() {
    let d = tempfile::tempdir().unwrap();
    let f = standin(&d.path().join("f.json"), "nvbench", false, &[]);
    let mut v = json(&f);
    v["benchmarks"][0]["name"] = "reduce\n::error::forged".into();
    write_json(&f, &v);
    let (code, out, err) = run(d.path(), &["parse", f.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("reduce\\n::error::forged ["), "{out}");
    assert!(
        !out.lines()
            .chain(err.lines())
            .any(|l| l.trim_start().starts_with("::")),
        "{out}{err}"
    );
}

/// Item 2: `init --from` wrote a device name into a comment of the spec raw, so a name holding a
/// line break wrote keys of its own (`settings.build`, which `bisect` runs with `sh -c`). The
/// name is now one line of the comment, in nvbench's `devices[].name`, Google Benchmark's
/// `context.gpu` and pytest-benchmark's `extra_info.gpu`, and the spec has only the keys init
/// writes.
#[test]
fn init_from_a_harness_file_never_writes_keys_from_a_device_name() {
    let names = [
        "NVIDIA X\nsettings:\n  build: \"touch PWNED\"\n#",
        "NVIDIA X\rsettings:\r  build: \"touch PWNED\"\r#",
        "NVIDIA X\u{2028}settings:\u{2028}  build: touch PWNED",
        "NVIDIA X\u{85}settings:\u{85}  build: touch PWNED",
    ];
    for kind in ["nvbench", "gbench", "pytest"] {
        for name in names {
            let d = tempfile::tempdir().unwrap();
            let f = standin(
                &d.path().join("f.json"),
                kind,
                false,
                &[("CGP_STANDIN_GPU", name)],
            );
            let (code, out, err) = run(
                d.path(),
                &["init", "--from", f.to_str().unwrap(), "-o", "spec.yaml"],
                &[],
            );
            assert_eq!(code, 0, "{kind} {name:?}: {out}{err}");
            let text = std::fs::read_to_string(d.path().join("spec.yaml")).unwrap();
            let doc: yaml_serde::Value = yaml_serde::from_str(&text).unwrap();
            let keys: Vec<String> = doc
                .as_mapping()
                .unwrap()
                .keys()
                .map(|k| k.as_str().unwrap().to_owned())
                .collect();
            assert_eq!(
                keys,
                ["version", "defaults", "targets"],
                "{kind} {name:?}:\n{text}"
            );
            assert!(!text.contains("\nsettings:"), "{kind} {name:?}:\n{text}");
            let device_line = text.lines().find(|l| l.starts_with("# Device: ")).unwrap();
            assert!(
                device_line.contains("build"),
                "one comment line holds all of it: {text}"
            );
            let (code, _, err) = run(d.path(), &["validate", "--spec", "spec.yaml"], &[]);
            assert_eq!(code, 0, "{err}");
        }
    }
}

/// Edit every value a closure picks in a JSON document.
fn edit(v: &mut Value, f: &dyn Fn(&str, &mut Value)) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                f(k, x);
                edit(x, f);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| edit(x, f)),
        _ => {}
    }
}

/// Item 4: a time of zero passed as a -100 % improvement (exit 0). Each is exit 2 now, naming the
/// file, the benchmark and the value: nvbench's `gpu/mean` of "0", "-0" and "1e-300", per-sample
/// times scaled to almost nothing, Google Benchmark's `real_time: 0` (what `UseManualTime` writes
/// when `SetIterationTime` is never called), pytest-benchmark rounds of 0.
#[test]
fn zero_and_vanishing_times_are_refused_in_every_harness_file() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let mut cases: Vec<(&str, &str, PathBuf)> = Vec::new();
    for mean in ["0", "-0", "1e-300"] {
        let f = standin(&dir.join(format!("nv{mean}.json")), "nvbench", false, &[]);
        let mut v = json(&f);
        for s in v["benchmarks"][0]["states"].as_array_mut().unwrap() {
            for sum in s["summaries"].as_array_mut().unwrap() {
                if sum["tag"] == "nv/cold/time/gpu/mean" {
                    sum["data"][0]["value"] = mean.into();
                }
            }
        }
        write_json(&f, &v);
        cases.push(("nvbench", "nv/cold/time/gpu", f));
    }
    // The per-sample times of the sidecar, scaled by 1e-9 (5 fs for 5 µs).
    let f = standin(&dir.join("bin.json"), "nvbench", true, &[]);
    let side = dir.join("bin.json-bin/0.bin");
    let scaled: Vec<u8> = std::fs::read(&side)
        .unwrap()
        .chunks_exact(4)
        .flat_map(|c| (f32::from_le_bytes([c[0], c[1], c[2], c[3]]) * 1e-9).to_le_bytes())
        .collect();
    std::fs::write(&side, scaled).unwrap();
    cases.push(("nvbench", "nv/cold/time/gpu", f));
    let f = standin(&dir.join("gb.json"), "gbench", false, &[]);
    let mut v = json(&f);
    edit(&mut v, &|k, x| {
        if k == "real_time" {
            *x = 0.into();
        }
    });
    write_json(&f, &v);
    cases.push(("gbench", "real_time", f));
    let f = standin(&dir.join("py.json"), "pytest", false, &[]);
    let mut v = json(&f);
    edit(&mut v, &|k, x| {
        if k == "data" {
            *x = serde_json::json!([0.0, 0.0, 0.0]);
        }
    });
    write_json(&f, &v);
    cases.push(("pytest-benchmark", "time", f));
    for (profiler, metric, f) in cases {
        spec(dir, profiler, metric);
        let (code, out) = import(dir, "rec", &[&f]);
        assert_eq!(code, 2, "{}: {out}", f.display());
        assert!(out.contains(&f.display().to_string()), "names the file: {out}");
        assert!(
            out.contains("no measurement") || out.contains("below one picosecond"),
            "{}: {out}",
            f.display()
        );
        assert!(!dir.join("rec").exists(), "nothing recorded: {out}");
    }
}

/// Item 6: files of two GPUs imported into one recording (its fingerprint names one, so a check
/// then compared the other GPU's numbers with its baselines), and a state naming a device the
/// file does not list.
#[test]
fn one_recording_holds_one_gpu_and_every_state_names_a_listed_device() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    spec(dir, "nvbench", "nv/cold/time/gpu");
    let a = standin(
        &dir.join("a.json"),
        "nvbench",
        false,
        &[("CGP_STANDIN_GPU", "GPU A")],
    );
    let h100 = standin(
        &dir.join("h100.json"),
        "nvbench",
        false,
        &[("CGP_STANDIN_GPU", "NVIDIA H100 80GB HBM3")],
    );
    let (code, out) = import(dir, "rec", &[&a, &h100, &a]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("ran on `NVIDIA H100 80GB HBM3`, and those of") && out.contains("on `GPU A`"),
        "{out}"
    );
    assert!(!dir.join("rec").exists(), "{out}");
    // A state that names device 1 of a file listing device 0 only.
    let mut v = json(&a);
    v["benchmarks"][0]["states"][1]["device"] = 1.into();
    let odd = dir.join("odd.json");
    write_json(&odd, &v);
    let (code, out) = import(dir, "rec", &[&odd]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("the state names device 1, and the file's `devices` list holds 0 only"),
        "{out}"
    );
}

/// Item 7: a `--jsonbin` sidecar the JSON names by an absolute path, or with `..`, was read from
/// outside the JSON's folder, and a recording did not copy it, so the same recording could give
/// another result when the outside file changed. Sidecars are read only from `<json>-bin/` beside
/// the JSON (what nvbench writes and a recording copies).
#[test]
fn sidecars_are_read_from_beside_the_json_only_and_travel_with_the_recording() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    spec(dir, "nvbench", "nv/cold/time/gpu");
    let outside = dir.join("elsewhere");
    std::fs::create_dir(&outside).unwrap();
    for (i, named) in ["ABSOLUTE/", "../elsewhere/", "x/../../elsewhere/"]
        .into_iter()
        .enumerate()
    {
        let f = standin(&dir.join(format!("s{i}.json")), "nvbench", true, &[]);
        let bin = dir.join(format!("s{i}.json-bin"));
        for e in std::fs::read_dir(&bin).unwrap() {
            let e = e.unwrap();
            std::fs::rename(e.path(), outside.join(e.file_name())).unwrap();
        }
        std::fs::remove_dir(&bin).unwrap();
        let abs = format!("{}/", outside.display());
        let mut v = json(&f);
        // Each state's times sidecar, named where it now is: outside the JSON's folder.
        edit(&mut v, &|k, x| {
            if k == "data"
                && let Some(a) = x.as_array_mut()
                && let Some(name) = a.iter_mut().find(|e| e["name"] == "filename")
                && let Some(n) = name["value"].as_str()
                && n.contains(".json-bin/")
            {
                let file = n.rsplit('/').next().unwrap().to_owned();
                let folder = if named == "ABSOLUTE/" { abs.as_str() } else { named };
                name["value"] = format!("{folder}{file}").into();
            }
        });
        write_json(&f, &v);
        let (code, out) = import(dir, "rec", &[&f]);
        assert_eq!(code, 2, "{named}: {out}");
        assert!(out.contains("it is not beside"), "{named}: {out}");
    }
    // A file with its sidecars beside it: the recording holds its copy, and a change of the
    // original afterwards changes nothing in a replay.
    let f = standin(&dir.join("ok.json"), "nvbench", true, &[]);
    assert_eq!(import(dir, "rec", &[&f, &f, &f]).0, 0);
    update(dir, "s.yaml", "rec", "bl");
    let side = dir.join("ok.json-bin/0.bin");
    let doubled: Vec<u8> = std::fs::read(&side)
        .unwrap()
        .chunks_exact(4)
        .flat_map(|c| (f32::from_le_bytes([c[0], c[1], c[2], c[3]]) * 2.0).to_le_bytes())
        .collect();
    std::fs::write(&side, doubled).unwrap();
    let (code, out, err) = check(dir, "s.yaml", "rec", "bl", &[], &[]);
    assert_eq!(code, 0, "{out}{err}");
}

/// Item 11: a Google Benchmark entry repeated with the same `repetition_index` counted as another
/// repetition; every process's first repetition was dropped as a warm-up (3 repetitions gave 2
/// samples; `left_out` said 0); a pytest-benchmark file without `stats.data` was compared with a
/// baseline of rounds without a word.
#[test]
fn gbench_repetitions_are_each_a_sample_once_and_a_mean_only_pytest_file_says_so() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    spec(dir, "gbench", "real_time");
    let files: Vec<PathBuf> = (0..3)
        .map(|i| standin(&dir.join(format!("g{i}.json")), "gbench", false, &[]))
        .collect();
    let mut v = json(&files[0]);
    let first = v["benchmarks"][0].clone();
    v["benchmarks"].as_array_mut().unwrap().push(first);
    let dup = dir.join("dup.json");
    write_json(&dup, &v);
    let (code, out) = import(dir, "rec", &[&dup]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("repetition 0 (`repetition_index`) appears twice"),
        "{out}"
    );
    assert_eq!(import(dir, "rec", &paths(&files)).0, 0);
    update(dir, "s.yaml", "rec", "bl");
    let (code, out, err) = check(dir, "s.yaml", "rec", "bl", &["--json", "r.json"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    let r = json(&dir.join("r.json"));
    for row in r["rows"].as_array().unwrap() {
        // 3 processes of 3 repetitions each, on both sides: every repetition is a sample.
        assert_eq!(row["baseline"]["n"], 9, "{row}");
        assert_eq!(row["candidate"]["n"], 9, "{row}");
    }

    // pytest-benchmark: a baseline of rounds, a run of files saved without them (one mean each).
    spec(dir, "pytest-benchmark", "time");
    let rounds: Vec<PathBuf> = (0..3)
        .map(|i| standin(&dir.join(format!("p{i}.json")), "pytest", false, &[]))
        .collect();
    let means: Vec<PathBuf> = rounds
        .iter()
        .map(|f| {
            let mut v = json(f);
            for b in v["benchmarks"].as_array_mut().unwrap() {
                b["stats"].as_object_mut().unwrap().remove("data");
            }
            let m = f.with_extension("mean.json");
            write_json(&m, &v);
            m
        })
        .collect();
    assert_eq!(import(dir, "prounds", &paths(&rounds)).0, 0);
    assert_eq!(import(dir, "pmeans", &paths(&means)).0, 0);
    update(dir, "s.yaml", "prounds", "pb");
    let (_, out, err) = check(dir, "s.yaml", "pmeans", "pb", &["--json", "p.json"], &[]);
    let r = json(&dir.join("p.json"));
    for row in r["rows"].as_array().unwrap() {
        let reason = row["reason"].as_str().unwrap();
        assert!(
            reason.contains("one value per process") && reason.contains("the baseline holds"),
            "{reason}\n{out}{err}"
        );
    }
}
