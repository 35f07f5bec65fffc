//! `cgp-gate init --from FILE [-- PROGRAM ARGS]` for harness files (docs/harnesses.md): the spec
//! it writes validates and replays its own file (every shared real file), and, given the
//! program, gates it live (the SYNTHETIC stand-in tests/standins/harness.py).

use std::path::{Path, PathBuf};

use crate::support::{bin, root};

fn cmd(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
    let mut c = bin();
    c.current_dir(dir).args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn the_spec_init_writes_replays_every_shared_file() {
    let Some(shared) = ["../shared/fixtures/harness", "../../shared/fixtures/harness"]
        .iter()
        .map(|p| root().join(p))
        .find(|d| d.is_dir())
    else {
        crate::support::skip(
            "harness_init",
            "no ../shared/fixtures/harness beside the checkout",
        );
        return;
    };
    let mut files: Vec<PathBuf> = ["nvbench", "gbench", "pytest-benchmark"]
        .iter()
        .flat_map(|d| {
            std::fs::read_dir(shared.join(d))
                .unwrap()
                .map(|e| e.unwrap().path())
        })
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 11);
    for f in &files {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let file = f.to_str().unwrap();
        let (code, out) = cmd(d, &["init", "--from", file], &[]);
        assert_eq!(code, 0, "{file}: {out}");
        let spec = std::fs::read_to_string(d.join("cgp-gate.yaml")).unwrap();
        assert!(spec.contains("profiler: "), "{spec}");
        // As many processes of the same file as the spec's `repetitions` (5 for a file of
        // summaries at its rows, issue 57; 3 for one of samples), each saying why.
        let reps: usize = spec
            .lines()
            .find_map(|l| l.strip_prefix("  repetitions: "))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("{spec}"));
        assert!(
            (3..=10).contains(&reps) && spec.contains("processes first"),
            "{spec}"
        );
        // A file of one value per process needs more than 3 to decide at 1 % over its rows
        // (stats::power::processes_to_decide); one of samples keeps 3.
        if spec.contains("one value per process") {
            assert!(reps >= 4, "{spec}");
        } else {
            assert_eq!(reps, 3, "{spec}");
        }
        let mut import = vec!["import", "--into", "rec"];
        import.extend(std::iter::repeat_n(file, reps));
        let (code, out) = cmd(d, &import, &[]);
        assert_eq!(code, 0, "{file}: {out}");
        let (code, out) = cmd(d, &["baseline", "update", "--replay", "rec"], &[]);
        assert_eq!(code, 0, "{file}: {out}");
        let (code, out) = cmd(d, &["check", "--replay", "rec"], &[]);
        assert_eq!(code, 0, "{file}: {out}");
    }
}

#[test]
fn init_with_the_program_gates_it_live_synthetic() {
    let standin = root().join("tests/standins/harness.py");
    for flag in ["--json", "--benchmark_out", "--benchmark-json"] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let file = d.join("first.json");
        let mut run = std::process::Command::new("python3");
        run.arg(&standin);
        if flag == "--json" {
            run.arg("--json").arg(&file).arg("--jsonbin");
        } else {
            run.arg(format!("{flag}={}", file.display()));
        }
        assert!(run.status().unwrap().success());
        let (code, out) = cmd(
            d,
            &[
                "init",
                "--from",
                file.to_str().unwrap(),
                "--",
                "python3",
                standin.to_str().unwrap(),
            ],
            &[],
        );
        assert_eq!(code, 0, "{flag}: {out}");
        let (code, out) = cmd(d, &["baseline", "update"], &[]);
        assert_eq!(code, 0, "{flag}: {out}");
        let (code, out) = cmd(d, &["check"], &[]);
        assert_eq!(code, 0, "{flag}: {out}");
        let (code, out) = cmd(d, &["check"], &[("CGP_STANDIN_SLOWDOWN", "1.10")]);
        assert_eq!(
            code,
            1,
            "{flag}: {out}\n{}",
            std::fs::read_to_string(d.join("cgp-gate.yaml")).unwrap()
        );
    }
}

/// Issue 59, item 7: nvbench's `--csv` output (the real file nvbench's repository ships beside
/// its JSON) given to `init --from` or `import` is named for what it is, with the JSON output to
/// give instead, not refused as a damaged ncu CSV or as broken JSON. Exit 2, nothing written.
#[test]
fn a_harness_csv_is_named_as_such_by_init_and_import() {
    let Some(csv) = ["../shared/fixtures/harness", "../../shared/fixtures/harness"]
        .iter()
        .map(|p| {
            root()
                .join(p)
                .join("nvbench/NVIDIA-nvbench__5db1524__examples-outputs__nvbench.example.throughput.csv")
        })
        .find(|f| f.is_file())
    else {
        crate::support::skip(
            "a_harness_csv_is_named_as_such_by_init_and_import",
            "no ../shared/fixtures/harness beside the checkout",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let csv = csv.to_str().unwrap();
    let (code, out) = cmd(d, &["init", "--from", csv], &[]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("this is nvbench's `--csv` output")
            && out.contains("run the benchmark with `--json FILE`"),
        "{out}"
    );
    assert!(!out.contains("ncu") && !out.contains("\"ID\""), "{out}");
    assert!(!d.join("cgp-gate.yaml").exists());
    std::fs::write(
        d.join("s.yaml"),
        "version: 1\ntargets:\n  - name: t\n    profiler: nvbench\n    command: [bench]\n    metrics:\n      nv/cold/time/gpu: \"5%\"\n",
    )
    .unwrap();
    let (code, out) = cmd(d, &["import", "--spec", "s.yaml", "--into", "rec", csv], &[]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("is not JSON: it is nvbench's `--csv` output"),
        "{out}"
    );
    assert!(!d.join("rec").exists());
}
