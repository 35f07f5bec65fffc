//! Issue 13, "an error is never a pass": hostile and damaged input, end to end through the binary.
//! The recordings are the SYNTHETIC example recordings (examples/synthesize_recording.rs), copied
//! and damaged per test.

use std::path::{Path, PathBuf};

use crate::support::{bin, copy_dir, gone, root};
use serde_json::Value;

/// A copy of an example recording, edited file by file (`edit(path, text) -> text`).
fn edited_recording(from: &str, edit: impl Fn(&Path, String) -> String) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&root().join(from), dir.path());
    fn walk(d: &Path, edit: &dyn Fn(&Path, String) -> String) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, edit);
            } else if p.extension().is_some_and(|x| x == "csv") {
                let text = std::fs::read_to_string(&p).unwrap();
                std::fs::write(&p, edit(&p, text)).unwrap();
            }
        }
    }
    walk(dir.path(), &edit);
    dir
}

struct Run {
    code: i32,
    results: Value,
    out: String,
}

/// `check` with a spec edited from examples/cgp-gate.yaml, a recording and a baselines folder.
fn check(spec_edit: impl Fn(String) -> String, recording: &Path, baselines: &Path, extra: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_edit(std::fs::read_to_string(root().join("examples/cgp-gate.yaml")).unwrap());
    std::fs::write(dir.path().join("cgp-gate.yaml"), spec).unwrap();
    let out = bin()
        .args(["check", "--spec"])
        .arg(dir.path().join("cgp-gate.yaml"))
        .arg("--replay")
        .arg(recording)
        .arg("--baselines")
        .arg(baselines)
        .arg("--json")
        .arg(dir.path().join("r.json"))
        .args(extra)
        .output()
        .unwrap();
    let results = std::fs::read_to_string(dir.path().join("r.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    Run {
        code: out.status.code().unwrap_or(-1),
        results,
        out: String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    }
}

fn same(s: String) -> String {
    s
}

fn baselines() -> PathBuf {
    root().join("examples/baselines")
}

/// pr-same with `matmul_tiled<32>` renamed to `matmul_tiled_v2<32>`: still selected by the spec's
/// `kernel: regex:matmul_tiled`, but a different kernel for the baseline.
fn renamed() -> tempfile::TempDir {
    edited_recording("examples/recordings/pr-same", |_, t| {
        t.replace("matmul_tiled<32>", "matmul_tiled_v2<32>")
    })
}

fn verdicts<'a>(r: &'a Value, target: &str) -> Vec<&'a str> {
    r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["target"] == target)
        .map(|x| x["verdict"].as_str().unwrap())
        .collect()
}

// ---- 1. A renamed kernel must not pass -------------------------------------------------------

#[test]
fn a_renamed_kernel_fails_the_gate_and_the_report_names_both_kernels() {
    let rec = renamed();
    let r = check(same, rec.path(), &baselines(), &[]);
    assert_eq!(r.code, 1, "{}", r.out);
    assert_eq!(r.results["verdict"], "regression");
    let m = verdicts(&r.results, "matmul");
    assert!(m.contains(&"missing") && m.contains(&"new"), "{m:?}");
    assert!(
        r.out.contains("kernels that disappeared") && r.out.contains("void matmul_tiled<32>"),
        "{}",
        r.out
    );
    assert!(
        r.out.contains("kernels that appeared") && r.out.contains("void matmul_tiled_v2<32>"),
        "{}",
        r.out
    );
    assert!(r.out.contains("--allow-missing"), "{}", r.out);
}

/// The `type` of every `<skipped>` element of a JUnit file.
fn skipped_types(xml: &str) -> Vec<String> {
    xml.split("<skipped ")
        .skip(1)
        .filter_map(|e| {
            let e = e.split('>').next()?;
            let at = e.find(" type=\"").or_else(|| e.find("type=\""))?;
            let rest = &e[at..];
            let rest = &rest[rest.find('"')? + 1..];
            Some(rest.split('"').next()?.to_owned())
        })
        .collect()
}

/// The (failures, errors, skipped) counts of a JUnit file's `<testsuites>` line and its
/// `<skipped` elements.
fn junit_counts(xml: &str) -> (usize, usize, usize) {
    let head = xml.lines().find(|l| l.contains("<testsuites")).unwrap();
    let attr = |name: &str| -> usize {
        let at = head.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        head[at..].split('"').next().unwrap().parse().unwrap()
    };
    (attr("failures"), attr("errors"), xml.matches("<skipped").count())
}

/// Every report shows a row that fails the gate as a failure, as the exit code does: a renamed
/// kernel's `missing` rows are JUnit failures (not `<skipped>`), `❌ missing` in the Markdown
/// table and `::error` annotations; with `--allow-missing` the same rows are skipped, not failed.
#[test]
fn missing_rows_that_fail_the_gate_are_failures_in_every_report() {
    let rec = renamed();
    let dir = tempfile::tempdir().unwrap();
    let (xml, md) = (dir.path().join("j.xml"), dir.path().join("c.md"));
    let out = bin()
        .args(["check", "--spec", "examples/cgp-gate.yaml", "--replay"])
        .arg(rec.path())
        .arg("--baselines")
        .arg(baselines())
        .arg("--junit")
        .arg(&xml)
        .arg("--markdown")
        .arg(&md)
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let missing = stdout.matches("::error ").count();
    let xml_text = std::fs::read_to_string(&xml).unwrap();
    let (failures, errors, _) = junit_counts(&xml_text);
    assert_eq!(errors, 0, "{xml_text}");
    assert!(failures > 0, "{xml_text}");
    assert!(xml_text.contains("type=\"missing\""), "{xml_text}");
    assert!(
        !skipped_types(&xml_text).contains(&"missing".to_owned()),
        "{xml_text}"
    );
    assert_eq!(
        failures,
        stdout
            .lines()
            .filter(|l| l.starts_with("::error ") && l.contains("cgp-gate missing"))
            .count(),
        "one failure per ::error annotation of a missing row: {stdout}"
    );
    assert!(missing >= failures);
    let md_text = std::fs::read_to_string(&md).unwrap();
    assert!(md_text.starts_with("### ❌"), "{md_text}");
    assert!(md_text.contains("| ❌ missing |"), "{md_text}");

    let out = bin()
        .args(["check", "--spec", "examples/cgp-gate.yaml", "--replay"])
        .arg(rec.path())
        .arg("--baselines")
        .arg(baselines())
        .arg("--junit")
        .arg(&xml)
        .arg("--allow-missing")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let xml_text = std::fs::read_to_string(&xml).unwrap();
    assert_eq!(junit_counts(&xml_text).0, 0, "{xml_text}");
    assert!(
        skipped_types(&xml_text).contains(&"missing".to_owned()),
        "{xml_text}"
    );
}

/// With `--fail-on inconclusive` an inconclusive row fails the gate: a JUnit failure, an `::error`
/// annotation and a `❌` in the Markdown, as the exit code says; without it, a skipped case and
/// a warning.
#[test]
fn inconclusive_rows_are_failures_under_fail_on_inconclusive() {
    let dir = tempfile::tempdir().unwrap();
    let (xml, md) = (dir.path().join("j.xml"), dir.path().join("c.md"));
    let run = |extra: &[&str]| {
        let out = bin()
            .args(["check", "--spec", "examples/cgp-gate.yaml", "--replay"])
            .arg(root().join("examples/recordings/pr-slowdown"))
            .arg("--baselines")
            .arg(baselines())
            .arg("--junit")
            .arg(&xml)
            .arg("--markdown")
            .arg(&md)
            .args(extra)
            .env("GITHUB_ACTIONS", "true")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            std::fs::read_to_string(&xml).unwrap(),
            std::fs::read_to_string(&md).unwrap(),
        )
    };
    // pr-slowdown: one regression and one inconclusive row (matmul).
    let (code, stdout, junit, comment) = run(&[]);
    assert_eq!(code, Some(1));
    assert_eq!(junit_counts(&junit).0, 1, "{junit}");
    assert!(
        skipped_types(&junit).contains(&"inconclusive".to_owned()),
        "{junit}"
    );
    assert!(stdout.contains("::warning "), "{stdout}");
    assert!(comment.contains("| ⚠️ inconclusive |"), "{comment}");
    let (code, stdout, junit, comment) = run(&["--fail-on", "inconclusive"]);
    assert_eq!(code, Some(1));
    assert_eq!(junit_counts(&junit).0, 2, "{junit}");
    assert!(
        !skipped_types(&junit).contains(&"inconclusive".to_owned()),
        "{junit}"
    );
    assert!(!stdout.contains("::warning "), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("::error ") && l.contains("cgp-gate inconclusive")),
        "{stdout}"
    );
    assert!(comment.contains("| ❌ inconclusive |"), "{comment}");
}

#[test]
fn missing_rows_pass_when_allowed_by_flag_or_by_the_spec() {
    let rec = renamed();
    let r = check(same, rec.path(), &baselines(), &["--allow-missing"]);
    assert_eq!(r.code, 0, "{}", r.out);
    assert!(verdicts(&r.results, "matmul").contains(&"missing"));
    let r = check(
        |s| {
            s.replace(
                "    flops: 2*n*n*n\n",
                "    flops: 2*n*n*n\n    allow_missing: true\n",
            )
        },
        rec.path(),
        &baselines(),
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.out);
    // Only matmul opts out: the same rename elsewhere still fails.
    let rec2 = edited_recording("examples/recordings/pr-same", |_, t| {
        t.replace("matmul_tiled<32>", "matmul_tiled_v2<32>")
            .replace("reduce_sum<256>", "reduce_sum_v2<256>")
    });
    let r = check(
        |s| {
            s.replace(
                "    flops: 2*n*n*n\n",
                "    flops: 2*n*n*n\n    allow_missing: true\n",
            )
        },
        rec2.path(),
        &baselines(),
        &[],
    );
    assert_eq!(r.code, 1, "{}", r.out);
}

#[test]
fn allow_missing_must_be_a_boolean_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let spec = std::fs::read_to_string(root().join("examples/cgp-gate.yaml"))
        .unwrap()
        .replace(
            "    flops: 2*n*n*n\n",
            "    flops: 2*n*n*n\n    allow_missing: yes please\n",
        );
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, spec).unwrap();
    let out = bin().args(["validate", "--spec"]).arg(&p).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("s.yaml:29:20") && err.contains("`allow_missing`"),
        "{err}"
    );
}

#[test]
fn rows_outside_the_selection_are_not_missing() {
    let rec = renamed();
    // Another target only: matmul's baseline rows are not expected.
    let r = check(same, rec.path(), &baselines(), &["--target", "vector_add"]);
    assert_eq!(r.code, 0, "{}", r.out);
    assert!(verdicts(&r.results, "matmul").is_empty());
    // Shards: the shards without matmul pass, the shard with it fails.
    let mut codes = Vec::new();
    let shards = tempfile::tempdir().unwrap();
    for k in 1..=3 {
        let r = check(same, rec.path(), &baselines(), &["--shard", &format!("{k}/3")]);
        std::fs::write(shards.path().join(format!("{k}.json")), r.results.to_string()).unwrap();
        let has_matmul = !verdicts(&r.results, "matmul").is_empty();
        codes.push((has_matmul, r.code));
        if has_matmul {
            assert_eq!(r.code, 1, "{}", r.out);
        } else {
            assert_eq!(r.code, 0, "{}", r.out);
        }
    }
    assert!(codes.iter().any(|(m, _)| *m), "some shard runs matmul: {codes:?}");
    assert!(codes.iter().any(|(m, _)| !*m), "some shard does not: {codes:?}");
    // The merged gate fails too.
    let out = bin()
        .arg("merge")
        .args((1..=3).map(|k| shards.path().join(format!("{k}.json"))))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A size removed from the spec fails as a renamed target's file does (issue 34), unless
    // allowed.
    let removed = |s: String| {
        s.replace(
            "      - { n: 512 }\n      - { n: 1024 }\n",
            "      - { n: 512 }\n",
        )
    };
    let rec = root().join("examples/recordings/pr-same");
    let r = check(removed, Path::new(&rec), &baselines(), &[]);
    assert_eq!(r.code, 1, "{}", r.out);
    assert!(verdicts(&r.results, "matmul").contains(&"missing"));
    let r = check(removed, Path::new(&rec), &baselines(), &["--allow-missing"]);
    assert_eq!(r.code, 0, "{}", r.out);
    assert!(verdicts(&r.results, "matmul").contains(&"missing"));
}

#[test]
fn replay_applies_the_specs_kernel_filter() {
    // Every vector_add repetition gains launches of a kernel the filter `vector_add` excludes.
    let rec = edited_recording("examples/recordings/pr-same", |p, t| {
        if !p.to_string_lossy().contains("vector_add") {
            return t;
        }
        let mut out = String::new();
        for line in t.lines() {
            out.push_str(line);
            out.push('\n');
            if line.starts_with("\"0\",") {
                out.push_str(
                    &line
                        .replace("\"vector_add(", "\"memset_helper(")
                        .replacen("\"0\"", "\"99\"", 1),
                );
                out.push('\n');
            }
        }
        out
    });
    let r = check(same, rec.path(), &baselines(), &[]);
    assert_eq!(r.code, 0, "{}", r.out);
    let kernels: Vec<&str> = r.results["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["kernel"].as_str().unwrap())
        .collect();
    assert!(
        !kernels.iter().any(|k| k.contains("memset_helper")),
        "{kernels:?}"
    );
    // A filter that matches nothing recorded, while kernels ran: the baseline's kernels are
    // missing (a gate finding, exit 1, as a library's switch of kernel is), and the report names
    // the kernels that ran. Never exit 3: the tool did not fail.
    let r = check(
        |s| s.replace("    kernel: vector_add\n", "    kernel: vector_addx\n"),
        rec.path(),
        &baselines(),
        &["--target", "vector_add"],
    );
    assert_eq!(r.code, 1, "{}", r.out);
    assert!(
        verdicts(&r.results, "vector_add").iter().all(|v| *v == "missing"),
        "{}",
        r.out
    );
    assert!(
        r.out.contains("not selected by its `kernel:` filter"),
        "{}",
        r.out
    );
    assert!(r.out.contains("memset_helper"), "{}", r.out);
    let reason = r.results["rows"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("selected none of the kernels that ran") && reason.contains("memset_helper"),
        "{reason}"
    );
    // The results file types the cause, so a reader never takes it from the reason's words.
    let cause = &r.results["rows"][0]["missing_cause"];
    assert_eq!(cause["kind"], "unselected", "{cause}");
    assert!(
        cause["ran"].as_array().is_some_and(|ran| ran
            .iter()
            .any(|k| k.as_str().is_some_and(|k| k.contains("memset_helper")))),
        "{cause}"
    );
}

// ---- 2, 6, 8. Damaged, unbounded and non-UTF-8 input ------------------------------------------

const REP: &str = "vector_add/n=1048576/0.csv";

/// pr-same with one repetition file replaced by `make(path)`.
fn damaged(make: impl Fn(&Path)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&root().join("examples/recordings/pr-same"), dir.path());
    let p = dir.path().join(REP);
    std::fs::remove_file(&p).unwrap();
    make(&p);
    dir
}

fn original_rep() -> Vec<u8> {
    std::fs::read(root().join("examples/recordings/pr-same").join(REP)).unwrap()
}

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

// ---- 3, 7. Recording into an existing folder; signals --------------------------------------

const FAKE_SPEC: &str = r#"version: 1
targets:
  - name: vector_add
    command: [./app, --n, "{n}"]
    kernel: vector_add
    timeout: 60s
    repetitions: 2
    sizes: [{n: 1048576}]
    metrics:
      gpu__time_duration.sum: "3%"
"#;

/// A folder with a spec and a stand-in ncu (tests/fixtures/fake-ncu/ncu) that writes `log`.
struct Fake {
    dir: tempfile::TempDir,
}

impl Fake {
    fn new() -> Self {
        let f = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        std::fs::write(f.path("cgp-gate.yaml"), FAKE_SPEC).unwrap();
        std::fs::create_dir(f.path("fake")).unwrap();
        std::fs::create_dir(f.path("tmp")).unwrap();
        std::fs::write(f.path("fake/log"), original_rep()).unwrap();
        f
    }
    fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }
    fn std_cmd(&self, args: &[&str]) -> std::process::Command {
        let mut c = crate::support::bin_std();
        c.current_dir(self.dir.path())
            .env("CGP_GATE_NCU", root().join("tests/fixtures/fake-ncu/ncu"))
            .env("FAKE_NCU_DIR", self.path("fake"))
            .env(crate::support::STAND_IN_GPU, crate::support::stand_in_gpu())
            .env("TMPDIR", self.path("tmp"))
            .args(args);
        c
    }
    fn run(&self, args: &[&str]) -> (i32, String) {
        let out = self.std_cmd(args).output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
        )
    }
}

#[test]
fn recording_into_an_old_recording_replaces_it_whole() {
    let f = Fake::new();
    let (code, out) = f.run(&["profile", "--record", "rec"]);
    assert_eq!(code, 0, "{out}");
    // A stale repetition from an older, longer recording.
    let stale = f.path("rec/vector_add/n=1048576/7.csv");
    std::fs::write(&stale, original_rep()).unwrap();
    let (code, out) = f.run(&["profile", "--record", "rec"]);
    assert_eq!(code, 0, "{out}");
    assert!(!stale.exists(), "a stale repetition survived the new recording");
    // A file cgp-gate did not write is never deleted: such a folder is refused (issue 34,
    // tests/record_secrets_and_signals.rs).
    assert!(f.path("rec/vector_add/n=1048576/1.csv").is_file());
    assert!(f.path("rec/manifest.json").is_file());
    // No staging folder is left next to it.
    let left: Vec<String> = std::fs::read_dir(f.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("recording"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn recording_into_a_folder_that_is_not_a_recording_is_refused() {
    let f = Fake::new();
    std::fs::create_dir(f.path("mine")).unwrap();
    std::fs::write(f.path("mine/thesis.tex"), "keep me").unwrap();
    let (code, out) = f.run(&["profile", "--record", "mine"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("not a cgp-gate recording"), "{out}");
    assert_eq!(
        std::fs::read_to_string(f.path("mine/thesis.tex")).unwrap(),
        "keep me"
    );
    // Refused before anything runs (issue 34): not even ncu's version is asked.
    assert!(!f.path("fake/argv.log").exists(), "ncu was started");
    assert!(!f.path("fake/count").exists(), "nothing was profiled");
}

/// Start `profile` with a hanging application, wait until it runs, send `signal`, and return the
/// exit status, the hanging grandchild's pid and the fake's folder.
fn interrupted(signal: nix::sys::signal::Signal) -> (Option<i32>, Option<i32>, i32, Fake) {
    use std::os::unix::process::ExitStatusExt;
    let f = Fake::new();
    std::fs::write(f.path("fake/hang"), "").unwrap();
    let mut child = f
        .std_cmd(&["profile", "--record", "rec"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pidfile = f.path("fake/hang.pid");
    for _ in 0..500 {
        if std::fs::read_to_string(&pidfile).is_ok_and(|t| t.trim().parse::<i32>().is_ok()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let hang: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, signal).unwrap();
    let status = child.wait().unwrap();
    (status.code(), status.signal(), hang, f)
}

#[test]
fn every_terminating_signal_ends_the_application_and_removes_temporary_folders() {
    use nix::sys::signal::Signal;
    for sig in [Signal::SIGHUP, Signal::SIGQUIT, Signal::SIGTERM, Signal::SIGINT] {
        let (code, _, hang, f) = interrupted(sig);
        // Exit 3 since issue 34 (128 + the signal before).
        assert_eq!(code, Some(3), "{sig}");
        assert!(
            gone(hang),
            "{sig}: the application (pid {hang}) outlived cgp-gate"
        );
        let left: Vec<_> = std::fs::read_dir(f.path("tmp")).unwrap().collect();
        assert!(left.is_empty(), "{sig}: temporary folders left: {left:?}");
        let staging: Vec<String> = std::fs::read_dir(f.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("recording"))
            .collect();
        assert!(staging.is_empty(), "{sig}: {staging:?}");
    }
}

// ---- 5, 11. Limits instead of crashes; messages that say what is wrong ------------------------

fn validate(spec: &str) -> (i32, String) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("s.yaml");
    std::fs::write(&p, spec).unwrap();
    let out = bin()
        .args(["validate", "--spec"])
        .arg(&p)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn example_with(from: &str, to: &str) -> String {
    let s = std::fs::read_to_string(root().join("examples/cgp-gate.yaml")).unwrap();
    assert!(s.contains(from));
    s.replace(from, to)
}

#[test]
fn deep_or_long_flops_expressions_are_refused_not_a_stack_overflow() {
    let deep = format!("{}n{}", "(".repeat(20_000), ")".repeat(20_000));
    let (code, err) = validate(&example_with("flops: 2*n*n*n", &format!("flops: \"{deep}\"")));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("s.yaml:28:12") && err.contains("characters long"),
        "{err}"
    );
    let deep = format!("{}n{}", "(".repeat(100), ")".repeat(100));
    let (code, err) = validate(&example_with("flops: 2*n*n*n", &format!("flops: \"{deep}\"")));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nests more than 32 levels"), "{err}");
    let minus = format!("{}n", "-".repeat(500));
    let (code, err) = validate(&example_with("flops: 2*n*n*n", &format!("flops: \"{minus}\"")));
    assert_eq!(code, 2, "{err}");
    let long = vec!["n"; 50_000].join("+");
    let (code, err) = validate(&example_with("bytes: 12*n*n", &format!("bytes: {long}")));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("characters long"), "{err}");
    // The longest accepted expression still evaluates.
    let ok = vec!["n"; 400].join("+");
    let (code, err) = validate(&example_with("bytes: 12*n*n", &format!("bytes: {ok}")));
    assert_eq!(code, 0, "{err}");
}

#[test]
fn deep_yaml_nesting_is_named_as_nesting_not_aliases() {
    for spec in [
        format!("version: 1\ntargets: {}{}\n", "[".repeat(100), "]".repeat(100)),
        format!("version: 1\ntargets:\n{}x\n", "- ".repeat(5000)),
    ] {
        let (code, err) = validate(&spec);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("nests more than 64 levels"), "{err}");
        assert!(!err.contains("aliases"), "{err}");
    }
}

#[test]
fn huge_shard_counts_are_refused_with_exit_2() {
    let out = bin()
        .args([
            "check",
            "--spec",
            "examples/cgp-gate.yaml",
            "--replay",
            "examples/recordings/pr-same",
        ])
        .args(["--baselines", "examples/baselines", "--shard", "1/4294967295"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("at most 1024 shards"), "{err}");
    // A results file that claims to be one shard of billions.
    let d = tempfile::tempdir().unwrap();
    let mut r: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/fixtures/results/pass.json")).unwrap(),
    )
    .unwrap();
    r["shard"] = "1/4294967295".into();
    let p = d.path().join("r.json");
    std::fs::write(&p, serde_json::to_string(&r).unwrap()).unwrap();
    let out = bin()
        .arg("merge")
        .arg(&p)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("at most 1024 shards"), "{err}");
}

#[test]
fn infinite_and_nan_percentages_are_named_as_such() {
    for bad in ["1e400%", "inf%", "NaN%", "-inf%"] {
        let (code, err) = validate(&example_with(
            "dram__bytes_read.sum: \"1%\"",
            &format!("dram__bytes_read.sum: \"{bad}\""),
        ));
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("not a finite percentage"), "{bad}: {err}");
        assert!(!err.contains("greater than 0%"), "{bad}: {err}");
    }
}

#[test]
fn names_too_long_for_a_file_name_are_refused_by_validate() {
    let long = "t".repeat(251);
    let (code, err) = validate(&example_with("- name: reduce", &format!("- name: {long}")));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("251 bytes long") && err.contains("at most 200"),
        "{err}"
    );
    let big = "9".repeat(300);
    let (code, err) = validate(&example_with(
        "      - { n: 16777216 }",
        &format!("      - {{ n: {big} }}"),
    ));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("a size of target `reduce`") && err.contains("at most 200"),
        "{err}"
    );
}

#[test]
fn a_missing_cwd_is_named_before_anything_runs() {
    let f = Fake::new();
    let spec = FAKE_SPEC.replace("    timeout: 60s\n", "    timeout: 60s\n    cwd: build/not-yet\n");
    std::fs::write(f.path("cgp-gate.yaml"), spec).unwrap();
    let (code, out) = f.run(&["profile"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("not-yet") && out.contains("does not exist"), "{out}");
    assert!(!out.contains("Nsight Compute"), "{out}");
    assert!(
        !f.path("fake/argv.log").exists(),
        "ncu was not even asked its version"
    );
}

// ---- 10. Units, negative durations, extra cells --------------------------------------------

/// examples/baselines with `edit` applied to every entry of matmul's baseline.
fn edited_matmul_baseline(edit: impl Fn(&mut Value)) -> tempfile::TempDir {
    let store = tempfile::tempdir().unwrap();
    copy_dir(&baselines(), store.path());
    let p = store.path().join("synthetic-gpu-no-hardware/matmul.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    for e in v["entries"].as_array_mut().unwrap() {
        if e["metric"] == "gpu__time_duration.sum" {
            edit(e);
        }
    }
    std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    store
}

#[test]
fn a_baseline_in_another_unit_is_not_compared() {
    // The samples stay the same numbers; only the unit says microseconds.
    let store = edited_matmul_baseline(|e| e["unit"] = "us".into());
    let r = check(
        same,
        &root().join("examples/recordings/pr-same"),
        store.path(),
        &[],
    );
    // A damaged baseline is invalid input (exit 2), never a profiler failure (3) or a pass.
    assert_eq!(r.code, 2, "{}", r.out);
    for needle in [
        "matmul.json",
        "gpu__time_duration.sum",
        "matmul_tiled<32>",
        "is in `us`, but ncu measures it in `ns`",
        "cgp-gate baseline update",
    ] {
        assert!(r.out.contains(needle), "{needle} not in:\n{}", r.out);
    }
    let rows: Vec<&Value> = r.results["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["target"] == "matmul" && x["metric"] == "gpu__time_duration.sum")
        .collect();
    assert_eq!(rows.len(), 2);
    for row in rows {
        assert_eq!(row["verdict"], "error", "{row}");
        assert!(
            row["reason"]
                .as_str()
                .unwrap()
                .contains("`us` but this run measured `ns`"),
            "{row}"
        );
    }
}

#[test]
fn negative_durations_are_refused_in_baselines_and_recordings() {
    let store = edited_matmul_baseline(|e| e["samples"][0] = (-5).into());
    let r = check(
        same,
        &root().join("examples/recordings/pr-same"),
        store.path(),
        &[],
    );
    assert_eq!(r.code, 2, "{}", r.out);
    assert!(
        r.out.contains("matmul.json") && r.out.contains("negative duration"),
        "{}",
        r.out
    );
    // In a recording: the duration cell of the first launch.
    let rec = damaged(|p| {
        let text = String::from_utf8(original_rep()).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let i = lines.iter().position(|l| l.starts_with("\"0\",")).unwrap();
        let mut cells: Vec<String> = lines[i].split("\",\"").map(str::to_owned).collect();
        let header: Vec<&str> = lines[i - 2].split("\",\"").collect();
        let col = header
            .iter()
            .position(|c| *c == "gpu__time_duration.sum")
            .unwrap();
        cells[col] = "-5,569".to_owned();
        lines[i] = cells.join("\",\"");
        std::fs::write(p, lines.join("\n") + "\n").unwrap();
    });
    let r = check(same, rec.path(), &baselines(), &[]);
    assert_eq!(r.code, 2, "{}", r.out);
    assert!(
        r.out.contains("0.csv") && r.out.contains("negative duration"),
        "{}",
        r.out
    );
}

#[test]
fn a_row_with_extra_cells_is_refused_with_its_line() {
    let rec = damaged(|p| {
        let text = String::from_utf8(original_rep()).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let i = lines.iter().position(|l| l.starts_with("\"1\",")).unwrap();
        lines[i].push_str(",\"17\",\"x\"");
        std::fs::write(p, lines.join("\n") + "\n").unwrap();
    });
    let line = String::from_utf8(original_rep())
        .unwrap()
        .lines()
        .position(|l| l.starts_with("\"1\","))
        .unwrap()
        + 1;
    let r = check(same, rec.path(), &baselines(), &[]);
    assert_eq!(r.code, 2, "{}", r.out);
    assert!(
        r.out.contains(&format!("0.csv:{line}")) && r.out.contains("more non-empty cell"),
        "{}",
        r.out
    );
}

// ---- 9. Control characters and bidi controls in every report ------------------------------

#[test]
fn control_and_bidi_characters_from_kernel_names_never_reach_a_report_raw() {
    // ESC colour sequence, an OSC window-title sequence ended by BEL, and RIGHT-TO-LEFT OVERRIDE,
    // in the kernel name ncu reported.
    let evil = "matmul_tiled\u{202e}evil\u{1b}[31m\u{1b}]0;pwned\u{7}<32>";
    let rec = edited_recording("examples/recordings/pr-same", |_, t| {
        t.replace("matmul_tiled<32>", evil)
    });
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("r.json");
    let summary = d.path().join("summary.md");
    let out = bin()
        .args(["check", "--spec", "examples/cgp-gate.yaml", "--replay"])
        .arg(rec.path())
        .args(["--baselines", "examples/baselines", "--json"])
        .arg(&json)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    let console = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{console}");
    let raw = |s: &str| s.contains('\u{1b}') || s.contains('\u{7}') || s.contains('\u{202e}');
    assert!(!raw(&console), "console and annotations: {console:?}");
    assert!(console.contains("<U+202E>"), "bidi shown visibly: {console}");
    assert!(
        console
            .lines()
            .any(|l| l.starts_with("::error") && l.contains("<U+001B>")),
        "annotations escape ESC: {console}"
    );
    let mut docs = vec![("summary", std::fs::read_to_string(&summary).unwrap())];
    for (flag, name) in [("--markdown", "r.md"), ("--html", "r.html"), ("--junit", "r.xml")] {
        let p = d.path().join(name);
        let o = bin()
            .args(["report", "--from"])
            .arg(&json)
            .arg(flag)
            .arg(&p)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        docs.push((name, std::fs::read_to_string(&p).unwrap()));
    }
    for (name, text) in docs {
        assert!(!raw(&text), "{name} holds a raw control or bidi character");
        // Markdown shows names as code spans, where `<U+202E>` is text as written.
        assert!(
            text.contains("&lt;U+202E&gt;")
                || (matches!(name, "summary" | "r.md") && text.contains("<U+202E>")),
            "{name} shows the bidi control visibly"
        );
    }
}

#[test]
fn ncu_dies_with_cgp_gate_even_on_sigkill() {
    let f = Fake::new();
    std::fs::write(f.path("fake/hang"), "").unwrap();
    let mut child = f
        .std_cmd(&["profile"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pidfile = f.path("fake/hang.pid");
    for _ in 0..500 {
        if std::fs::read_to_string(&pidfile).is_ok_and(|t| t.trim().parse::<i32>().is_ok()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let ncu: i32 = std::fs::read_to_string(f.path("fake/ncu.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let hang: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
    // No handler runs for SIGKILL: only the parent-death signal can end ncu.
    child.kill().unwrap();
    child.wait().unwrap();
    let ncu_gone = gone(ncu);
    // The application's own process (ncu's child) is left to ncu's death; clean it up here.
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(hang),
        nix::sys::signal::Signal::SIGKILL,
    );
    assert!(ncu_gone, "ncu (pid {ncu}) outlived a SIGKILLed cgp-gate");
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

// ---- Found by examples/fuzz.rs ---------------------------------------------------------------

#[test]
fn a_results_file_with_an_absurd_cost_renders_without_a_panic() {
    // Fuzzing found it: `cost_seconds` of 1e20 s made the JUnit writer's Duration panic.
    let d = tempfile::tempdir().unwrap();
    let mut r: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/fixtures/results/pass.json")).unwrap(),
    )
    .unwrap();
    r["cost_seconds"]["gemm"] = 1e20.into();
    let p = d.path().join("r.json");
    std::fs::write(&p, serde_json::to_string(&r).unwrap()).unwrap();
    let out = bin()
        .args(["report", "--from"])
        .arg(&p)
        .arg("--junit")
        .arg(d.path().join("j.xml"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::read_to_string(d.path().join("j.xml"))
            .unwrap()
            .contains("<testsuites")
    );
}
