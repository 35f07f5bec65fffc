//! Issue 13, "an error is never a pass": hostile and damaged input, end to end through the binary.
//! The recordings are the SYNTHETIC example recordings (examples/synthesize_recording.rs), copied
//! and damaged per test.

use std::path::{Path, PathBuf};

use crate::support::{bin, copy_dir, gone, root};
use serde_json::Value;

mod damaged_input;
mod limits_and_units;
mod recording_and_signals;

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

// Shared with the parts: a repetition file of pr-same to damage (items 2, 6, 8, 10), and a
// folder with a stand-in ncu (items 3, 5, 7).

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
