//! Issue 27, "an error is never a pass, round 2": damaged recordings, edited baselines, renamed
//! targets, output paths that are links or devices, and unbounded specs, end to end through the
//! binary. The recordings are the SYNTHETIC example recordings (examples/synthesize_recording.rs),
//! copied and damaged per test. Every test here failed on the code before the fix (docs/reliability.md).

use std::path::{Path, PathBuf};

use crate::support::{bin, copy_dir, root};
use assert_cmd::Command;
use serde_json::Value;

/// A copy of `examples/recordings/<name>`.
fn recording(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&root().join("examples/recordings").join(name), dir.path());
    dir
}

/// The repetition file all the CSV damage goes into.
const REP: &str = "vector_add/n=1048576/0.csv";

/// Edit the lines of `REP` in `rec` (bytes, so NULs and lone CRs survive).
fn edit_rep(rec: &Path, edit: impl Fn(Vec<Vec<u8>>) -> Vec<Vec<u8>>) {
    let p = rec.join(REP);
    let bytes = std::fs::read(&p).unwrap();
    let lines: Vec<Vec<u8>> = bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    std::fs::write(&p, edit(lines).join(&b'\n')).unwrap();
}

/// Index of the raw page's header line in `REP` (after ncu's `==PROF==` lines).
fn header_index(lines: &[Vec<u8>]) -> usize {
    lines.iter().position(|l| l.starts_with(b"\"ID\",")).unwrap()
}

struct Run {
    code: i32,
    results: Value,
    out: String,
}

fn run(mut c: Command) -> (i32, String) {
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// `check --replay` with a spec (examples/cgp-gate.yaml edited), a recording and a baselines folder.
fn check(spec_edit: impl Fn(String) -> String, rec: &Path, baselines: &Path, extra: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_edit(std::fs::read_to_string(root().join("examples/cgp-gate.yaml")).unwrap());
    std::fs::write(dir.path().join("cgp-gate.yaml"), spec).unwrap();
    let mut c = bin();
    c.args(["check", "--spec"])
        .arg(dir.path().join("cgp-gate.yaml"))
        .arg("--replay")
        .arg(rec)
        .arg("--baselines")
        .arg(baselines)
        .arg("--json")
        .arg(dir.path().join("r.json"))
        .args(extra);
    let (code, out) = run(c);
    let results = std::fs::read_to_string(dir.path().join("r.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    Run { code, results, out }
}

fn same(s: String) -> String {
    s
}

fn baselines() -> PathBuf {
    root().join("examples/baselines")
}

/// A copy of the example baselines, the vector_add file edited as JSON.
fn edited_baselines(edit: impl Fn(&mut Value)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&baselines(), dir.path());
    let p = dir.path().join("synthetic-gpu-no-hardware/vector_add.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    dir
}

/// A damaged recording: exit 2, naming the repetition file and the line, plus `needles`.
fn assert_damaged(r: &Run, needles: &[&str]) {
    assert_eq!(r.code, 2, "{}", r.out);
    assert!(r.out.contains("n=1048576/0.csv:"), "{}", r.out);
    assert!(r.out.contains("bad-recording"), "{}", r.out);
    for n in needles {
        assert!(r.out.contains(n), "`{n}` not in: {}", r.out);
    }
}

// ---- 1. A duplicate metric column -----------------------------------------------------------

#[test]
fn a_duplicate_metric_column_is_refused_naming_the_column_and_the_file() {
    for name in ["gpu__time_duration.sum", "gpu__time_duration.sum "] {
        let rec = recording("pr-same");
        edit_rep(rec.path(), |mut lines| {
            let h = header_index(&lines);
            lines[h].extend_from_slice(format!(",\"{name}\"").as_bytes());
            lines[h + 1].extend_from_slice(b",\"ns\"");
            for l in lines.iter_mut().skip(h + 2).filter(|l| l.starts_with(b"\"")) {
                // Doubled values: read as the time, a +100% regression out of nothing.
                l.extend_from_slice(b",\"11000\"");
            }
            lines
        });
        let r = check(same, rec.path(), &baselines(), &[]);
        assert_damaged(
            &r,
            &[
                "column `gpu__time_duration.sum` twice",
                "metric `gpu__time_duration.sum`",
            ],
        );
    }
}

// ---- 2. A duplicate launch row ----------------------------------------------------------------

#[test]
fn a_repeated_launch_row_is_refused_not_counted_twice() {
    let rec = recording("pr-same");
    edit_rep(rec.path(), |mut lines| {
        let h = header_index(&lines);
        let row = lines[h + 2].clone();
        lines.insert(h + 3, row);
        lines
    });
    let r = check(same, rec.path(), &baselines(), &[]);
    assert_damaged(&r, &["`ID` 0 appears twice", "kernel `vector_add("]);
}

// ---- 3. A NUL byte in a kernel name -----------------------------------------------------------

#[test]
fn a_nul_byte_in_a_kernel_name_is_an_error_not_a_dropped_launch() {
    let rec = recording("pr-same");
    edit_rep(rec.path(), |mut lines| {
        let h = header_index(&lines);
        let row = String::from_utf8(lines[h + 2].clone()).unwrap();
        lines[h + 2] = row.replacen("\"vector_add(", "\"vector_\0add(", 1).into_bytes();
        lines
    });
    let r = check(same, rec.path(), &baselines(), &[]);
    assert_damaged(&r, &["NUL byte in the kernel name", "vector_<U+0000>add("]);
}

// ---- 4. Zero durations ------------------------------------------------------------------------

#[test]
fn a_zero_duration_is_damaged_input_in_a_recording_and_in_a_baseline() {
    let rec = recording("pr-same");
    edit_rep(rec.path(), |mut lines| {
        let h = header_index(&lines);
        let header = String::from_utf8(lines[h].clone()).unwrap();
        let col = header
            .split(',')
            .position(|c| c == "\"gpu__time_duration.sum\"")
            .unwrap();
        for l in lines.iter_mut().skip(h + 2).filter(|l| l.starts_with(b"\"")) {
            // The synthetic rows have no comma inside the cells before this column except in
            // the kernel's parameter list and the grouped numbers; split on `","` instead.
            let text = String::from_utf8(l.clone()).unwrap();
            let mut cells: Vec<String> = text.trim_matches('"').split("\",\"").map(str::to_owned).collect();
            cells[col] = "0".to_owned();
            *l = format!("\"{}\"", cells.join("\",\"")).into_bytes();
        }
        lines
    });
    let r = check(same, rec.path(), &baselines(), &[]);
    assert_eq!(r.code, 2, "{}", r.out);
    assert!(
        r.out
            .contains("metric `gpu__time_duration.sum` of kernel `vector_add(")
            && r.out.contains("is 0 ns")
            && r.out.contains("n=1048576/0.csv"),
        "{}",
        r.out
    );

    // A baseline whose time samples are all 0: refused, naming the file and the entry.
    let b = edited_baselines(|v| {
        for e in v["entries"].as_array_mut().unwrap() {
            if e["metric"] == "gpu__time_duration.sum" {
                let n = e["samples"].as_array().unwrap().len();
                e["samples"] = Value::Array(vec![Value::from(0); n]);
            }
        }
    });
    let r = check(same, &root().join("examples/recordings/pr-same"), b.path(), &[]);
    assert_eq!(r.code, 2, "{}", r.out);
    assert!(
        r.out.contains("vector_add.json")
            && r.out.contains("gpu__time_duration.sum")
            && r.out.contains("0 ns"),
        "{}",
        r.out
    );

    // A counter that is 0 in every sample is valid (bank conflicts of a kernel without shared
    // memory): an entry of one, whose metric the spec does not gate, is an informational row.
    let b = edited_baselines(|v| {
        let mut e = v["entries"][0].clone();
        e["metric"] = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum".into();
        e["unit"] = "".into();
        let n = e["samples"].as_array().unwrap().len();
        e["samples"] = Value::Array(vec![Value::from(0); n]);
        v["entries"].as_array_mut().unwrap().push(e);
    });
    let r = check(same, &root().join("examples/recordings/pr-same"), b.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.out);
}

// ---- 5. A baseline without entries ------------------------------------------------------------

#[test]
fn a_baseline_with_no_entries_is_refused() {
    let b = edited_baselines(|v| v["entries"] = Value::Array(Vec::new()));
    // pr-slowdown's vector_add rows would be `new` against an empty baseline.
    let r = check(same, &root().join("examples/recordings/pr-same"), b.path(), &[]);
    assert_eq!(r.code, 2, "{}", r.out);
    assert!(
        r.out.contains("vector_add.json")
            && r.out.contains("holds no entries")
            && r.out.contains("baseline update"),
        "{}",
        r.out
    );
}

// ---- 6. A renamed target ----------------------------------------------------------------------

/// A recording (copy of `from`) and spec edit with `vector_add` renamed to `vadd`.
fn renamed_target(from: &str) -> tempfile::TempDir {
    let rec = recording(from);
    std::fs::rename(rec.path().join("vector_add"), rec.path().join("vadd")).unwrap();
    let m = rec.path().join("manifest.json");
    let text = std::fs::read_to_string(&m).unwrap();
    std::fs::write(&m, text.replace("\"vector_add\"", "\"vadd\"")).unwrap();
    rec
}

fn rename_in_spec(s: String) -> String {
    s.replace("name: vector_add", "name: vadd")
}

#[test]
fn the_baseline_file_of_a_renamed_target_fails_a_full_run_unless_allowed() {
    let rec = renamed_target("pr-same");
    let r = check(rename_in_spec, rec.path(), &baselines(), &[]);
    assert_eq!(r.code, 1, "{}", r.out);
    assert_eq!(r.results["verdict"], "regression");
    let file = baselines().join("synthetic-gpu-no-hardware/vector_add.json");
    assert!(
        r.out.contains(&format!(
            "the baseline file {} is of target `vector_add`",
            file.display()
        )),
        "{}",
        r.out
    );
    assert!(
        r.out.contains("baseline update") && r.out.contains("--allow-missing"),
        "{}",
        r.out
    );
    let gone: Vec<&Value> = r.results["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["target"] == "vector_add")
        .collect();
    assert_eq!(gone.len(), 6, "one missing row per entry of the file");
    assert!(
        gone.iter()
            .all(|x| x["verdict"] == "missing" && x["fails_gate"] == true)
    );

    let r = check(rename_in_spec, rec.path(), &baselines(), &["--allow-missing"]);
    assert_eq!(r.code, 0, "{}", r.out);
    assert!(r.out.contains("allowed by --allow-missing"), "{}", r.out);

    // A run of some targets only says nothing about the others' files.
    let r = check(rename_in_spec, rec.path(), &baselines(), &["--target", "vadd"]);
    assert_eq!(r.code, 0, "{}", r.out);
}

#[test]
fn merge_fails_on_the_baseline_file_of_a_renamed_target_over_its_shards() {
    let rec = renamed_target("pr-same");
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for k in 1..=2 {
        let r = check(
            rename_in_spec,
            rec.path(),
            &baselines(),
            &["--shard", &format!("{k}/2")],
        );
        let p = dir.path().join(format!("{k}.json"));
        std::fs::write(&p, serde_json::to_string(&r.results).unwrap()).unwrap();
        let gone = r.results["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["target"] == "vector_add")
            .count();
        // Shard 1 carries the file's rows, so that the merge counts them once.
        assert_eq!(gone, if k == 1 { 6 } else { 0 }, "shard {k}/2");
        files.push(p);
    }
    let mut c = bin();
    c.arg("merge")
        .args(&files)
        .arg("--json")
        .arg(dir.path().join("m.json"));
    let (code, out) = run(c);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("vector_add.json") && out.contains("--allow-missing"),
        "{out}"
    );
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("m.json")).unwrap()).unwrap();
    assert_eq!(m["verdict"], "regression");
}

// ---- 8. Output paths that are links or devices ------------------------------------------------

#[cfg(unix)]
#[test]
fn reports_are_not_written_through_symbolic_links_or_into_pipes() {
    // Round 2 wrote through links (`--json /dev/stdout`); round 4 (issue 44) refuses them: a link
    // made the tool write over whatever it pointed at. The link and its target stay as they were.
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("real.json");
    std::fs::write(&target, "mine").unwrap();
    let link = dir.path().join("link.json");
    symlink(&target, &link).unwrap();
    let pipe = dir.path().join("stdout");
    symlink("/proc/self/fd/1", &pipe).unwrap();
    let spec = root().join("examples/cgp-gate.yaml");
    for out in [&link, &pipe] {
        let o = bin()
            .args(["check", "--spec"])
            .arg(&spec)
            .arg("--replay")
            .arg(root().join("examples/recordings/pr-same"))
            .arg("--baselines")
            .arg(baselines())
            .arg("--json")
            .arg(out)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stderr).contains("a symbolic link"));
        assert!(std::fs::symlink_metadata(out).unwrap().file_type().is_symlink());
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "mine");
}

// ---- 9. A table with no launch rows ----------------------------------------------------------

#[test]
fn a_recording_with_a_header_and_units_but_no_rows_is_damaged_not_a_profiler_failure() {
    let rec = recording("pr-same");
    edit_rep(rec.path(), |lines| {
        let h = header_index(&lines);
        lines[..h + 2].to_vec()
    });
    let r = check(same, rec.path(), &baselines(), &[]);
    assert_eq!(r.code, 2, "{}", r.out);
    assert!(
        r.out.contains("n=1048576/0.csv") && r.out.contains("no launch rows"),
        "{}",
        r.out
    );
}

// ---- 10. Byte-order marks and line endings ----------------------------------------------------

#[test]
fn byte_order_marks_and_cr_only_line_endings_are_named() {
    // A BOM before a table without `==PROF==` lines: read, as the same bytes are by `parse`.
    let rec = recording("pr-same");
    edit_rep(rec.path(), |lines| {
        let mut l: Vec<Vec<u8>> = lines.into_iter().filter(|l| !l.starts_with(b"==")).collect();
        l[0].splice(0..0, "\u{feff}".bytes());
        l
    });
    let r = check(same, rec.path(), &baselines(), &[]);
    assert_eq!(r.code, 0, "{}", r.out);

    // Two BOMs (two files joined): named.
    edit_rep(rec.path(), |mut l| {
        l[0].splice(0..0, "\u{feff}".bytes());
        l
    });
    let r = check(same, rec.path(), &baselines(), &[]);
    assert_damaged(&r, &["byte-order mark"]);

    // CR-only line endings: named.
    let rec = recording("pr-same");
    let p = rec.path().join(REP);
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, text.replace('\n', "\r")).unwrap();
    let r = check(same, rec.path(), &baselines(), &[]);
    assert_eq!(r.code, 2, "{}", r.out);
    assert!(
        r.out.contains("carriage return only") && r.out.contains("n=1048576/0.csv"),
        "{}",
        r.out
    );
}

// ---- 11-13. Bounded specs ---------------------------------------------------------------------

/// `validate` of a generated spec: (exit code, output).
fn validate(text: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, text).unwrap();
    let mut c = bin();
    c.arg("validate").arg("--spec").arg(&p);
    let (code, out) = run(c);
    (code, out.replace(&p.display().to_string(), "s.yaml"))
}

fn target(name: &str, sizes: &str, metrics: usize, extra: &str) -> String {
    let mut t = format!(
        "  - name: {name}\n    command: [/bin/true, \"{{n}}\"]\n{extra}    sizes:\n{sizes}    metrics:\n"
    );
    for i in 0..metrics {
        t.push_str(&format!("      sm__m{i}.sum: {{min: 1}}\n"));
    }
    t
}

fn matrix(n: usize) -> String {
    let values: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
    format!("      matrix:\n        n: [{}]\n", values.join(", "))
}

fn list(n: usize) -> String {
    (1..=n).map(|i| format!("      - {{n: {i}}}\n")).collect()
}

#[test]
fn the_documented_maximum_of_sizes_validates_and_more_are_refused_in_both_forms() {
    let spec = |sizes: &str| format!("version: 1\ntargets:\n{}", target("t", sizes, 1, ""));
    // 10,000 sizes, the maximum, in either form (checking is linear; timings in docs/reliability.md).
    for sizes in [matrix(10_000), list(10_000)] {
        let (code, out) = validate(&spec(&sizes));
        assert_eq!(code, 0, "{out}");
        assert!(out.contains("10000 sizes"), "{out}");
    }
    let (code, out) = validate(&spec(&list(10_001)));
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("s.yaml:6:7: `sizes` of target `t` lists 10001 sizes; at most 10000"),
        "{out}"
    );
    let (code, out) = validate(&spec(&matrix(10_001)));
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("expands to more than 10000 sizes"), "{out}");
}

#[test]
fn the_rows_of_a_whole_spec_are_capped() {
    // 2 targets x 10,000 sizes x 6 metrics = 120,000 rows > 100,000.
    let text = format!(
        "version: 1\ntargets:\n{}{}",
        target("a", &matrix(10_000), 6, ""),
        target("b", &matrix(10_000), 6, "")
    );
    let (code, out) = validate(&text);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("s.yaml:15:11: with target `b` the spec asks for more than 100000 rows"),
        "{out}"
    );
}

#[test]
fn repetitions_are_capped() {
    for (extra, needle) in [
        (
            "    repetitions: 4000000000\n",
            "s.yaml:5:18: `repetitions` of target `t` is 4000000000; at most 1000",
        ),
        (
            "    max_repetitions: 1001\n",
            "s.yaml:5:22: `max_repetitions` of target `t` is 1001; at most 1000",
        ),
        (
            "    baseline_repetitions: 5000\n",
            "`baseline_repetitions` of target `t` is 5000; at most 1000",
        ),
    ] {
        let (code, out) = validate(&format!(
            "version: 1\ntargets:\n{}",
            target("t", &list(1), 1, extra)
        ));
        assert_eq!(code, 2, "{out}");
        assert!(out.contains(needle), "{out}");
    }
    let (code, out) = validate(&format!(
        "version: 1\ntargets:\n{}",
        target(
            "t",
            &list(1),
            1,
            "    repetitions: 1000\n    max_repetitions: 1000\n    baseline_repetitions: 1000\n"
        )
    ));
    assert_eq!(code, 0, "{out}");
}

#[test]
fn metrics_per_target_are_capped() {
    let (code, out) = validate(&format!(
        "version: 1\ntargets:\n{}",
        target("t", &list(1), 1_001, "")
    ));
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("s.yaml:8:7: `metrics` of target `t` lists 1001 metrics; at most 1000"),
        "{out}"
    );
    let (code, out) = validate(&format!(
        "version: 1\ntargets:\n{}",
        target("t", &list(1), 1_000, "")
    ));
    assert_eq!(code, 0, "{out}");
}
