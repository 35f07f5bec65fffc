//! Items 2, 6 and 8: damaged, unbounded and non-UTF-8 input (repetition files, baselines,
//! results, manifests, specs) is an error that names the file and its line, never a value.

use super::*;

// ---- 2, 6, 8. Damaged, unbounded and non-UTF-8 input ------------------------------------------

fn baseline_update(rec: &Path, store: &Path) -> (i32, String) {
    let out = bin()
        .args([
            "baseline",
            "update",
            "--spec",
            "examples/cgp-gate.yaml",
            "--replay",
        ])
        .arg(rec)
        .arg("--baselines")
        .arg(store)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn a_rep_file_cut_inside_a_quoted_cell_is_an_error_naming_file_and_line() {
    // The last cell loses its closing quote and the newline: `"18.01` must not become 18.01.
    let rec = damaged(|p| {
        let mut b = original_rep();
        while b.last() == Some(&b'\n') {
            b.pop();
        }
        assert_eq!(b.pop(), Some(b'"'));
        std::fs::write(p, b).unwrap();
    });
    let lines = original_rep()
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    let r = check(same, rec.path(), &baselines(), &[]);
    assert_eq!(r.code, 2, "{}", r.out);
    assert!(
        r.out.contains(&format!("0.csv:{lines}")),
        "names the file and line {lines}: {}",
        r.out
    );
    let store = tempfile::tempdir().unwrap();
    let (code, out) = baseline_update(rec.path(), store.path());
    assert_eq!(code, 2, "{out}");
    assert!(
        std::fs::read_dir(store.path()).map_or(true, |mut d| d.next().is_none()),
        "no baseline written"
    );
    // `calibrate` maps the same damaged recording to the same exit code (one mapping:
    // crate::outcome::decide), not to a profiler failure.
    let out = bin()
        .args(["calibrate", "--spec", "examples/cgp-gate.yaml", "--replay"])
        .arg(rec.path())
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_rep_file_that_is_not_utf8_is_invalid_input_with_its_position() {
    let rec = damaged(|p| {
        let mut b = original_rep();
        // Inside the kernel name of the first data row.
        let at = b.windows(11).position(|w| w == b"vector_add(").unwrap() + 3;
        b[at] = 0xff;
        std::fs::write(p, b).unwrap();
    });
    let r = check(same, rec.path(), &baselines(), &[]);
    assert_eq!(r.code, 2, "{}", r.out);
    assert!(
        r.out.contains("0.csv") && r.out.contains("not UTF-8"),
        "{}",
        r.out
    );
    assert!(r.out.contains("line ") && r.out.contains("column "), "{}", r.out);
    // `parse` of the same file.
    let out = bin().arg("parse").arg(rec.path().join(REP)).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_rep_file_linked_to_dev_zero_or_a_fifo_is_refused_without_reading() {
    let zero = damaged(|p| std::os::unix::fs::symlink("/dev/zero", p).unwrap());
    let fifo = damaged(|p| {
        assert!(
            std::process::Command::new("mkfifo")
                .arg(p)
                .status()
                .unwrap()
                .success()
        );
    });
    for (rec, kind) in [(&zero, "a device"), (&fifo, "a FIFO")] {
        let out = bin()
            .args(["check", "--spec", "examples/cgp-gate.yaml", "--replay"])
            .arg(rec.path())
            .args(["--baselines", "examples/baselines"])
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text}");
        assert!(
            text.contains(kind) && text.contains("not a regular file"),
            "{text}"
        );
    }
}

#[test]
fn a_dangling_rep_symlink_says_so() {
    let rec = damaged(|p| std::os::unix::fs::symlink("/nonexistent/cgp-gate/0.csv", p).unwrap());
    let r = check(same, rec.path(), &baselines(), &[]);
    assert_eq!(r.code, 2, "{}", r.out);
    assert!(
        r.out.contains("symbolic link") && r.out.contains("does not exist"),
        "{}",
        r.out
    );
    assert!(!r.out.contains("has no repetition"), "{}", r.out);
}

#[test]
fn baselines_and_results_that_are_not_regular_files_or_not_utf8_are_refused() {
    // A baseline linked to /dev/zero, and one that is a FIFO.
    for make in [
        (|p: &Path| std::os::unix::fs::symlink("/dev/zero", p).unwrap()) as fn(&Path),
        |p: &Path| {
            assert!(
                std::process::Command::new("mkfifo")
                    .arg(p)
                    .status()
                    .unwrap()
                    .success()
            )
        },
    ] {
        let store = tempfile::tempdir().unwrap();
        copy_dir(&baselines(), store.path());
        let p = store.path().join("synthetic-gpu-no-hardware/matmul.json");
        std::fs::remove_file(&p).unwrap();
        make(&p);
        let out = bin()
            .args([
                "check",
                "--spec",
                "examples/cgp-gate.yaml",
                "--replay",
                "examples/recordings/pr-same",
            ])
            .arg("--baselines")
            .arg(store.path())
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text}");
        assert!(
            text.contains("matmul.json") && text.contains("not a regular file"),
            "{text}"
        );
    }
    // Results: a FIFO to `merge`, non-UTF-8 to `report`.
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("r.json");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let out = bin()
        .arg("merge")
        .arg(&fifo)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bad = d.path().join("bad.json");
    let mut text = std::fs::read(root().join("tests/fixtures/results/pass.json")).unwrap();
    let at = text.windows(4).position(|w| w == b"gemm").unwrap();
    text[at] = 0xc3;
    std::fs::write(&bad, text).unwrap();
    let out = bin()
        .args(["report", "--from"])
        .arg(&bad)
        .arg("--markdown")
        .arg(d.path().join("o.md"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not UTF-8") && err.contains("line "), "{err}");
}

#[test]
fn a_manifest_that_is_not_utf8_is_invalid_input() {
    let rec = tempfile::tempdir().unwrap();
    copy_dir(&root().join("examples/recordings/pr-same"), rec.path());
    let p = rec.path().join("manifest.json");
    let mut b = std::fs::read(&p).unwrap();
    b[5] = 0xfe;
    std::fs::write(&p, b).unwrap();
    let r = check(same, rec.path(), &baselines(), &[]);
    assert_eq!(r.code, 2, "{}", r.out);
    assert!(
        r.out.contains("manifest.json") && r.out.contains("not UTF-8"),
        "{}",
        r.out
    );
}

#[test]
fn a_spec_that_is_not_utf8_names_line_and_column() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("s.yaml");
    let text = std::fs::read_to_string(root().join("examples/cgp-gate.yaml")).unwrap();
    let mut b = text
        .replace("  - name: matmul", "  - name: matm\u{fffd}ul")
        .into_bytes();
    let at = b.windows(3).position(|w| w == "\u{fffd}".as_bytes()).unwrap();
    b.splice(at..at + 3, [0xe9]);
    std::fs::write(&p, b).unwrap();
    let line = text.lines().position(|l| l == "  - name: matmul").unwrap() + 1;
    let out = bin().args(["validate", "--spec"]).arg(&p).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("s.yaml:{line}:15:")) && err.contains("not UTF-8"),
        "{err}"
    );
}

#[test]
fn a_recorded_failure_without_argv_still_says_what_to_do() {
    let rec = tempfile::tempdir().unwrap();
    copy_dir(&root().join("examples/recordings/pr-same"), rec.path());
    let p = rec.path().join("manifest.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    for run in m["runs"].as_array_mut().unwrap() {
        if run["target"] == "vector_add" {
            run["exit_code"] = 1.into();
            run["argv"] = Value::Array(Vec::new());
        }
    }
    std::fs::write(&p, serde_json::to_string(&m).unwrap()).unwrap();
    let r = check(same, rec.path(), &baselines(), &["--target", "vector_add"]);
    assert_eq!(r.code, 3, "{}", r.out);
    assert!(!r.out.contains("run it by hand to see why: \n"), "{}", r.out);
    assert!(r.out.contains("profile --dry-run"), "{}", r.out);
}

#[test]
fn a_cut_off_baseline_is_an_error_naming_file_and_line() {
    // Already so before issue 13 (serde_json reports the position); kept as a guard.
    let store = tempfile::tempdir().unwrap();
    copy_dir(&baselines(), store.path());
    let p = store.path().join("synthetic-gpu-no-hardware/matmul.json");
    let text = std::fs::read_to_string(&p).unwrap();
    let cut = text.find("\"samples\": [").unwrap() + 20;
    std::fs::write(&p, &text[..cut]).unwrap();
    let line = text[..cut].lines().count();
    let r = check(
        same,
        &root().join("examples/recordings/pr-same"),
        store.path(),
        &[],
    );
    assert_eq!(r.code, 2, "{}", r.out);
    assert!(
        r.out.contains("matmul.json") && r.out.contains(&format!("line {line}")),
        "{}",
        r.out
    );
}
