//! `cgp-gate import`: harness files a CI job already wrote become a recording that `--replay`
//! reads (docs/harnesses.md). On the shared real files (../shared/fixtures/harness, beside the
//! checkout) and on files of the SYNTHETIC stand-in tests/standins/harness.py.

use std::path::{Path, PathBuf};

use crate::support::{bin, root};

/// The shared real harness files, or `None` (a skip, which fails under CI).
fn shared() -> Option<PathBuf> {
    let found = ["../shared/fixtures/harness", "../../shared/fixtures/harness"]
        .iter()
        .map(|p| root().join(p))
        .find(|d| d.is_dir());
    if found.is_none() {
        crate::support::skip(
            "harness_import",
            "no ../shared/fixtures/harness beside the checkout",
        );
    }
    found
}

fn one(dir: &Path, pattern: &str) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(pattern))
        .unwrap()
}

const SPEC: &str = "version: 1
targets:
  - name: cub-reduce
    profiler: nvbench
    command: [cub.bench.reduce.sum.base]
    repetitions: 2
    metrics:
      nv/cold/time/gpu: \"5%\"
  - name: kokkos
    profiler: gbench
    command: [Kokkos_PerformanceTest_Benchmark]
    kernel: \"regex:^GramSchmidt\"
    repetitions: 2
    metrics:
      real_time: \"5%\"
  - name: fib
    profiler: pytest-benchmark
    command: [pytest, bench.py]
    repetitions: 2
    metrics:
      time: \"5%\"
";

fn cmd(args: &[&str], extra: &[&Path]) -> (i32, String) {
    let out = bin().args(args).args(extra).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn real_files_import_and_replay_through_baseline_update_and_check() {
    let Some(shared) = shared() else { return };
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.yaml");
    std::fs::write(&spec, SPEC).unwrap();
    let nv = one(&shared.join("nvbench"), "lktr-wq");
    let gb = one(&shared.join("gbench"), "kokkos");
    let py = one(
        &shared.join("pytest-benchmark"),
        "github-action-benchmark__test-data-extract__pytest_several",
    );
    let rec = dir.path().join("rec");
    let (code, out) = cmd(
        &[
            "import",
            "--spec",
            spec.to_str().unwrap(),
            "--into",
            rec.to_str().unwrap(),
        ],
        &[&nv, &gb, &py, &nv, &gb, &py],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("cub-reduce: 2, fib: 2, kokkos: 2"), "{out}");
    for t in ["cub-reduce", "kokkos", "fib"] {
        assert!(rec.join(t).join("default/1.json").is_file(), "{t}");
    }
    let store = dir.path().join("b");
    let s = spec.to_str().unwrap();
    let (code, out) = cmd(
        &[
            "baseline",
            "update",
            "--spec",
            s,
            "--replay",
            rec.to_str().unwrap(),
            "--baselines",
            store.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}");
    // The GPU is the device the nvbench file names: no NVML was asked.
    assert!(
        store
            .join("nvidia-geforce-rtx-4060-laptop-gpu/cub-reduce.json")
            .is_file(),
        "{out}"
    );
    let json = dir.path().join("r.json");
    let (code, out) = cmd(
        &[
            "check",
            "--spec",
            s,
            "--replay",
            rec.to_str().unwrap(),
            "--baselines",
            store.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let rows = r["rows"].as_array().unwrap();
    // 2 nvbench states, the GramSchmidt states of the Kokkos file, 4 pytest benchmarks.
    let of = |t: &str| rows.iter().filter(|row| row["target"] == t).count();
    assert_eq!((of("cub-reduce"), of("fib")), (2, 4), "{rows:?}");
    assert!(of("kokkos") > 0);
    // The nvbench row is the file's own mean (summary only: one value per process).
    let row = rows
        .iter()
        .find(|row| row["kernel"] == "base [T=I32,OffsetT=I32,Elements=2^16]")
        .unwrap();
    assert_eq!(row["verdict"], "pass", "{row}");
    // Its reason says what the statistics can and cannot do with summaries.
    let reason = row["reason"].as_str().unwrap();
    assert!(
        reason.contains("; summary only (nvbench wrote one mean per process, no `--jsonbin` samples)")
            && reason.contains("`stdev/relative`) is not used"),
        "{reason}"
    );
    // Per-sample rows of the other harnesses do not say it.
    assert!(
        rows.iter()
            .filter(|row| row["target"] != "cub-reduce")
            .all(|row| !row["reason"]
                .as_str()
                .unwrap_or_default()
                .contains("summary only")),
        "{rows:?}"
    );
}

#[test]
fn a_slowdown_in_imported_files_is_a_regression_synthetic() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.yaml");
    std::fs::write(&spec, "version: 1\ntargets:\n  - name: reduce\n    profiler: gbench\n    command: [bench]\n    repetitions: 3\n    metrics:\n      real_time: \"5%\"\n").unwrap();
    let write = |name: &str, slow: &str| -> PathBuf {
        let p = dir.path().join(name);
        let ok = std::process::Command::new("python3")
            .arg(root().join("tests/standins/harness.py"))
            .arg(format!("--benchmark_out={}", p.display()))
            .arg("--benchmark_repetitions=10")
            .env("CGP_STANDIN_SLOWDOWN", slow)
            .status()
            .unwrap();
        assert!(ok.success());
        p
    };
    let base: Vec<PathBuf> = (0..3).map(|i| write(&format!("base{i}.json"), "1")).collect();
    let slow: Vec<PathBuf> = (0..3).map(|i| write(&format!("slow{i}.json"), "1.10")).collect();
    let s = spec.to_str().unwrap();
    let (rb, rs) = (dir.path().join("rb"), dir.path().join("rs"));
    assert_eq!(
        cmd(
            &["import", "--spec", s, "--into", rb.to_str().unwrap()],
            &base.iter().map(PathBuf::as_path).collect::<Vec<_>>()
        )
        .0,
        0
    );
    assert_eq!(
        cmd(
            &["import", "--spec", s, "--into", rs.to_str().unwrap()],
            &slow.iter().map(PathBuf::as_path).collect::<Vec<_>>()
        )
        .0,
        0
    );
    let store = dir.path().join("b");
    let b = store.to_str().unwrap();
    assert_eq!(
        cmd(
            &[
                "baseline",
                "update",
                "--spec",
                s,
                "--replay",
                rb.to_str().unwrap(),
                "--baselines",
                b
            ],
            &[]
        )
        .0,
        0
    );
    let (code, out) = cmd(
        &[
            "check",
            "--spec",
            s,
            "--replay",
            rb.to_str().unwrap(),
            "--baselines",
            b,
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}");
    let (code, out) = cmd(
        &[
            "check",
            "--spec",
            s,
            "--replay",
            rs.to_str().unwrap(),
            "--baselines",
            b,
        ],
        &[],
    );
    assert_eq!(code, 1, "{out}");
}

#[test]
fn bad_files_are_exit_2_naming_the_file() {
    let Some(shared) = shared() else { return };
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.yaml");
    std::fs::write(&spec, SPEC).unwrap();
    let nv = std::fs::read(one(&shared.join("nvbench"), "lktr-wq")).unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truncated.json", nv[..nv.len() / 2].to_vec(), "truncated"),
        (
            "twice.json",
            [nv.clone(), nv.clone()].concat(),
            "more than one JSON document",
        ),
        (
            "foreign.json",
            br#"{"traceEvents": []}"#.to_vec(),
            "not a file nvbench",
        ),
        (
            "nan.json",
            String::from_utf8(nv.clone())
                .unwrap()
                .replacen("\"value\": \"0.00010384549099999991\"", "\"value\": \"nan\"", 1)
                .into_bytes(),
            "benchmark `base`, state `T=I32,OffsetT=I32,Elements=2^16`: summary `nv/cold/time/cpu/mean` is NaN",
        ),
    ];
    for (name, bytes, want) in cases {
        let f = dir.path().join(name);
        std::fs::write(&f, bytes).unwrap();
        let rec = dir.path().join(format!("rec-{name}"));
        let (code, out) = cmd(
            &[
                "import",
                "--spec",
                spec.to_str().unwrap(),
                "--into",
                rec.to_str().unwrap(),
            ],
            &[&f],
        );
        assert_eq!(code, 2, "{name}: {out}");
        assert!(out.contains(name) && out.contains(want), "{name}: {out}");
        assert!(!rec.exists(), "{name}: a recording was written");
    }
    // A state missing from a later run: the second file lacks the 2^24 state.
    let one_state = dir.path().join("one-state.json");
    let mut doc: serde_json::Value = serde_json::from_slice(&nv).unwrap();
    doc["benchmarks"][0]["states"].as_array_mut().unwrap().truncate(1);
    std::fs::write(&one_state, serde_json::to_vec(&doc).unwrap()).unwrap();
    let full = one(&shared.join("nvbench"), "lktr-wq");
    let (code, out) = cmd(
        &[
            "import",
            "--spec",
            spec.to_str().unwrap(),
            "--into",
            dir.path().join("r2").to_str().unwrap(),
        ],
        &[&full, &one_state],
    );
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("one-state.json")
            && out.contains("`base [T=I32,OffsetT=I32,Elements=2^24]` (benchmark [state]) is in"),
        "{out}"
    );
    // A file no target takes.
    let py = one(&shared.join("gbench"), "github-action-benchmark");
    let only_nv = dir.path().join("nv.yaml");
    std::fs::write(&only_nv, SPEC.split("  - name: kokkos").next().unwrap()).unwrap();
    let (code, out) = cmd(
        &[
            "import",
            "--spec",
            only_nv.to_str().unwrap(),
            "--into",
            dir.path().join("r").to_str().unwrap(),
        ],
        &[&py],
    );
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("no target of") && out.contains("Google Benchmark file"),
        "{out}"
    );
}

/// Sharding, merge and calibrate reach harness targets through the backend like any other:
/// two shards of an imported recording (SYNTHETIC stand-in files of the three harnesses) merge
/// into one passing run, and calibrate reports each row's noise.
#[test]
fn imported_harness_targets_shard_merge_and_calibrate_synthetic() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let standin = root().join("tests/standins/harness.py");
    let spec = d.join("s.yaml");
    std::fs::write(
        &spec,
        "version: 1\ndefaults:\n  command: [bench]\n  repetitions: 3\ntargets:\n  - name: nv\n    profiler: nvbench\n    metrics:\n      nv/cold/time/gpu: \"5%\"\n  - name: gb\n    profiler: gbench\n    metrics:\n      real_time: \"5%\"\n  - name: py\n    profiler: pytest-benchmark\n    metrics:\n      time: \"5%\"\n",
    )
    .unwrap();
    let mut files = Vec::new();
    for i in 0..3 {
        for (flag, sep) in [
            ("--json", " "),
            ("--benchmark_out", "="),
            ("--benchmark-json", "="),
        ] {
            let f = d.join(format!("{}-{i}.json", flag.trim_start_matches('-')));
            let mut c = std::process::Command::new("python3");
            c.arg(&standin);
            if sep == " " {
                c.arg(flag).arg(&f).arg("--jsonbin");
            } else {
                c.arg(format!("{flag}={}", f.display()));
            }
            assert!(c.status().unwrap().success());
            files.push(f);
        }
    }
    let s = spec.to_str().unwrap();
    let rec = d.join("rec");
    let (code, out) = cmd(
        &["import", "--spec", s, "--into", rec.to_str().unwrap()],
        &files.iter().map(PathBuf::as_path).collect::<Vec<_>>(),
    );
    assert_eq!(code, 0, "{out}");
    // The nvbench sidecars came with their files.
    assert!(rec.join("nv/default/2.json-bin/0.bin").is_file());
    let (r, b) = (rec.to_str().unwrap(), d.join("b"));
    let b = b.to_str().unwrap();
    assert_eq!(
        cmd(
            &["baseline", "update", "--spec", s, "--replay", r, "--baselines", b],
            &[]
        )
        .0,
        0
    );
    let mut parts = Vec::new();
    for k in ["1/2", "2/2"] {
        let json = d.join(format!("r{}.json", &k[..1]));
        let (code, out) = cmd(
            &[
                "check",
                "--spec",
                s,
                "--replay",
                r,
                "--baselines",
                b,
                "--shard",
                k,
                "--json",
                json.to_str().unwrap(),
            ],
            &[],
        );
        assert_eq!(code, 0, "{k}: {out}");
        parts.push(json);
    }
    let merged = d.join("m.json");
    let (code, out) = cmd(
        &["merge", "--json", merged.to_str().unwrap()],
        &parts.iter().map(PathBuf::as_path).collect::<Vec<_>>(),
    );
    assert_eq!(code, 0, "{out}");
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(&merged).unwrap()).unwrap();
    // Two states of each of the three targets.
    assert_eq!(m["rows"].as_array().unwrap().len(), 6, "{m}");
    let (code, out) = cmd(&["calibrate", "--spec", s, "--replay", r], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("nv/cold/time/gpu") && out.contains("real_time"),
        "{out}"
    );
}

/// Issue 59, item 2: the console's one-line reason of an nvbench row of summaries only says what
/// decided it (`deterministic value got worse ... +10.00%`) before the note on where its samples
/// came from, which follows it (in full in `--json`). The real 2026 nvbench file against its
/// SYNTHETIC +10 % copy (scripts/nvbench_slow_copy.py), as docs/harnesses.md ran them.
#[test]
fn an_nvbench_summary_rows_console_reason_says_why_first() {
    let Some(shared) = shared() else { return };
    let dir = tempfile::tempdir().unwrap();
    let nv = one(&shared.join("nvbench"), "lktr-wq");
    let slow = dir.path().join("slow.json");
    let copied = std::process::Command::new("python3")
        .arg(root().join("scripts/nvbench_slow_copy.py"))
        .arg(&nv)
        .arg(&slow)
        .status()
        .unwrap();
    assert!(copied.success());
    let p = |x: &Path| x.to_str().unwrap().to_owned();
    let spec = p(&dir.path().join("cgp-gate.yaml"));
    let (code, out) = cmd(&["init", "--from", &p(&nv), "-o", &spec], &[]);
    assert_eq!(code, 0, "{out}");
    let (rec, cand, store) = (
        p(&dir.path().join("ref")),
        p(&dir.path().join("slow")),
        p(&dir.path().join("b")),
    );
    // As many copies as the spec asks processes (5: a file of summaries, issue 57).
    let n = crate::support::spec_repetitions(Path::new(&spec));
    for (into, file) in [(&rec, &nv), (&cand, &slow)] {
        let (code, out) = cmd(
            &["import", "--spec", &spec, "--into", into],
            &vec![file.as_path(); n],
        );
        assert_eq!(code, 0, "{out}");
    }
    let (code, out) = cmd(
        &[
            "baseline",
            "update",
            "--spec",
            &spec,
            "--replay",
            &rec,
            "--baselines",
            &store,
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}");
    // The command init took from the file is a path on the machine that wrote it: the SASS
    // cache, which does not apply to harness rows, does not ask to build it (issue 59, item 7).
    assert!(std::fs::read_to_string(&spec).unwrap().contains("\"/home/lktr/"));
    assert!(!out.contains("build it first") && !out.contains("SASS"), "{out}");
    let json = p(&dir.path().join("r.json"));
    let (code, out) = cmd(
        &[
            "check",
            "--spec",
            &spec,
            "--replay",
            &cand,
            "--baselines",
            &store,
            "--json",
            &json,
        ],
        &[],
    );
    assert_eq!(code, 1, "{out}");
    // No row has a p-value (deterministic values are compared exactly): no p column, and no
    // legend of one (issue 59, item 7).
    let head = out.lines().find(|l| l.starts_with("verdict ")).unwrap();
    assert!(
        !head.trim_end().ends_with(" p") && !head.contains("p (adj.)"),
        "{out}"
    );
    assert!(!out.contains("p (adj.): "), "{out}");
    let reasons: Vec<&str> = out.lines().filter(|l| l.starts_with("reason ")).collect();
    assert!(!reasons.is_empty(), "{out}");
    for line in &reasons {
        let (_, text) = line.split_once("): ").unwrap();
        assert!(
            text.starts_with("deterministic value got worse") && text.contains("+10.00%"),
            "{line}\n{out}"
        );
    }
    // The full reason (JSON) has both: the decisive sentence, then the note.
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for row in r["rows"].as_array().unwrap() {
        let reason = row["reason"].as_str().unwrap();
        let why = reason.find("deterministic value got worse");
        let note = reason.find("summary only (nvbench wrote one mean per process");
        assert!(matches!((why, note), (Some(w), Some(n)) if w < n), "{reason}");
    }
}
