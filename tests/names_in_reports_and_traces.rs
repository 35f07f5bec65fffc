//! Issue 44, "an error is never a pass, round 4", item 6: every report carries every character
//! a name can hold. A kernel name is the compiler's bytes passed through by ncu or CUPTI, so it
//! can hold U+FFFE (which XML 1.0 cannot carry, not even as a reference), the line separator
//! U+2028, zero-width characters and a byte-order mark (which a terminal or a viewer shows as
//! nothing or as a line break), a URL or a `GH-1` / `!12` reference (which a comment would make a
//! live link). The results come from the REAL H100 recording `extra3` checked against the REAL
//! baselines through the binary; the kernel name of one row is then edited, and `report` renders
//! the file again, as a user re-renders a results file.

use std::path::Path;
use std::process::Command;

use crate::support::root;

const HOSTILE: &str = "gemm\u{FFFE}\u{FFFF}\u{2028}mid\u{2029}\u{200B}\u{200D}\u{FEFF}end https://evil.example/x www.evil.example GH-1 !12";

/// `check` on the real planted recording, then the first row's kernel renamed to [`HOSTILE`].
fn hostile_results(dir: &Path) -> std::path::PathBuf {
    let rec = root().join("examples/recordings/h100");
    let json = dir.join("r.json");
    let out = crate::support::bin()
        .env("CGP_GATE_NCU", "/nonexistent/ncu")
        .arg("check")
        .arg("--spec")
        .arg(rec.join("check.yaml"))
        .arg("--replay")
        .arg(rec.join("extra3"))
        .arg("--baselines")
        .arg(root().join("examples/baselines-h100"))
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    v["rows"][0]["kernel"] = serde_json::Value::String(HOSTILE.to_owned());
    // A reason quotes what a program printed: the same text, outside any code span.
    let reason = format!(
        "{}; program said: {HOSTILE}",
        v["rows"][0]["reason"].as_str().unwrap()
    );
    v["rows"][0]["reason"] = serde_json::Value::String(reason);
    let edited = dir.join("hostile.json");
    std::fs::write(&edited, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    edited
}

#[test]
fn junit_console_and_markdown_carry_every_character_of_a_kernel_name() {
    let dir = tempfile::tempdir().unwrap();
    let results = hostile_results(dir.path());
    let (junit, md) = (dir.path().join("r.xml"), dir.path().join("r.md"));
    let out = crate::support::bin()
        .args(["report", "--color", "never", "--no-github-actions", "--from"])
        .arg(&results)
        .arg("--junit")
        .arg(&junit)
        .arg("--markdown")
        .arg(&md)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = crate::support::bin()
        .args(["report", "--color", "never", "--no-github-actions", "--from"])
        .arg(&results)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let console = String::from_utf8_lossy(&out.stdout).into_owned();

    // Console: the invisible characters are shown, never written raw.
    assert!(console.contains("gemm<U+FFFE><U+FFFF><U+2028>mid"), "{console}");
    for c in [
        '\u{FFFE}', '\u{2028}', '\u{2029}', '\u{200B}', '\u{200D}', '\u{FEFF}',
    ] {
        assert!(!console.contains(c), "console prints U+{:04X} raw", u32::from(c));
    }

    // JUnit: well-formed XML 1.0 for a strict reader (expat), with the name's visible parts.
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        !xml.contains(['\u{FFFE}', '\u{FFFF}', '\u{2028}', '\u{FEFF}']),
        "{xml}"
    );
    assert!(
        xml.contains("gemm&lt;U+FFFE&gt;&lt;U+FFFF&gt;&lt;U+2028&gt;mid"),
        "{xml}"
    );
    match Command::new("python3")
        .args([
            "-c",
            "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])",
        ])
        .arg(&junit)
        .output()
    {
        Ok(p) => assert!(
            p.status.success(),
            "expat refused the JUnit: {}",
            String::from_utf8_lossy(&p.stderr)
        ),
        Err(e) => crate::support::skip(
            "names_in_reports_and_traces::junit_console_and_markdown_carry_every_character_of_a_kernel_name",
            &format!("python3 could not run ({e}), so expat did not read the JUnit"),
        ),
    }

    // Markdown: outside code spans (where nothing links), no bare URL, no `GH-1` or `!12`
    // reference in the comment's source, and no invisible character raw anywhere; the text
    // still reads the same once rendered (a CommonMark reader decodes the references).
    let comment = std::fs::read_to_string(&md).unwrap();
    let mut source_outside_code = comment.clone();
    let mut rendered = String::new();
    for (event, range) in
        pulldown_cmark::Parser::new_ext(&comment, pulldown_cmark::Options::all()).into_offset_iter()
    {
        match event {
            pulldown_cmark::Event::Code(_) => {
                source_outside_code.replace_range(range.clone(), &" ".repeat(range.len()))
            }
            pulldown_cmark::Event::Text(t) => rendered.push_str(&t),
            _ => {}
        }
    }
    for live in ["://", "www.evil", "GH-1", "!12"] {
        assert!(
            !source_outside_code.contains(live),
            "`{live}` stays live in the comment:\n{comment}"
        );
    }
    assert!(
        rendered.contains("https://evil.example/x www.evil.example GH-1 !12"),
        "{rendered}"
    );
    for c in ['\u{2028}', '\u{200B}', '\u{FEFF}', '\u{FFFE}'] {
        assert!(
            !comment.contains(c),
            "Markdown carries U+{:04X} raw",
            u32::from(c)
        );
    }
    assert!(comment.contains("evil.example"), "{comment}");
}

/// A target name holding a line separator (raw or as a YAML escape) is refused by `validate`
/// with the file, line and column, as every name character a file name cannot carry.
#[test]
fn a_target_name_with_a_line_separator_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    for (file, name) in [("raw.yaml", "vadd\u{2028}"), ("escaped.yaml", "\"vadd\\u2028\"")] {
        let spec = dir.path().join(file);
        std::fs::write(
            &spec,
            format!(
                "version: 1\ntargets:\n  - name: {name}\n    command: [./t]\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n"
            ),
        )
        .unwrap();
        let out = crate::support::bin()
            .args(["validate", "--spec"])
            .arg(&spec)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(&format!("{file}:3:11")), "{err}");
        assert!(err.contains("\\u{2028}") && !err.contains('\u{2028}'), "{err}");
    }
}

/// Item 5: the CUPTI reader applies the ncu reader's rules. SYNTHETIC traces in the library's
/// format (`tests/cupti_gate/mod.rs` writes them), replayed by `profile`: a kernel record written
/// twice (the trailer's count adjusted to match), launches with a dimension of 0, and a kernel
/// name with a zero-width space (or none) beside clean ones are each damaged input, exit 2.
#[test]
fn damaged_cupti_records_are_refused_as_ncu_output_is() {
    use crate::cupti_gate::{End, SPEC, process, profile, trace};
    let clean = trace(&process(1, 73_000.0, 16), End::Flushed);
    let (code, _, err) = profile(SPEC, std::slice::from_ref(&clean));
    assert_eq!(code, 0, "the clean trace must replay: {err}");

    // One kernel line twice, the trailer counting it.
    let mut lines: Vec<String> = clean.lines().map(str::to_owned).collect();
    let n = lines.len();
    lines.insert(3, lines[2].clone());
    let records = n - 2;
    lines[n] = lines[n].replace(
        &format!("\"records\":{records}"),
        &format!("\"records\":{}", records + 1),
    );
    let duplicated = lines.join("\n") + "\n";
    let (code, _, err) = profile(SPEC, &[duplicated]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("recorded twice with correlation ID"), "{err}");

    // Every launch with grid (0, 0, 0): no GPU runs it; it is not a smaller grid.
    let mut zero = process(1, 73_000.0, 16);
    for l in &mut zero {
        l.grid = [0, 0, 0];
    }
    let (code, _, err) = profile(SPEC, &[trace(&zero, End::Flushed)]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("grid (0, 0, 0)") && err.contains("a dimension of 0"),
        "{err}"
    );

    // A name with a zero-width space, and a name that is empty, beside clean names.
    for odd in ["vector\u{200B}_add(const float*, const float*, float*, int)", ""] {
        let mut launches = process(1, 73_000.0, 16);
        launches[5].name = odd;
        let (code, _, err) = profile(SPEC, &[trace(&launches, End::Flushed)]);
        assert_eq!(code, 2, "{odd:?}: {err}");
        assert!(err.contains("has kernel name"), "{odd:?}: {err}");
    }
}

/// `profile` of a cupti target whose command is `d/forge.sh` (the forging program the test wrote),
/// on the stand-in GPU.
fn profile_forger(d: &Path) -> std::process::Output {
    std::fs::write(
        d.join("s.yaml"),
        "version: 1\ntargets:\n  - name: va\n    command: [./forge.sh]\n    profiler: cupti\n    kernel: regex:vector_add\n    repetitions: 1\n    timeout: 60s\n    metrics:\n      gpu__time_duration.sum: \"5%\"\n",
    )
    .unwrap();
    crate::support::bin()
        .current_dir(d)
        .env(crate::support::STAND_IN_GPU, crate::support::stand_in_gpu())
        .args(["profile", "--spec", "s.yaml"])
        .output()
        .unwrap()
}

/// Item 3, in part: a program that writes a complete trace of its own to `$CGP_GATE_CUPTI_OUT`
/// and then runs real CUDA code sends the library's real trace, holding CUPTI's refusal (no GPU
/// here), to `<trace>.<pid>`: a refusal in any trace of the run fails it, exit 3, where the
/// forged trace used to pass with a warning. A real nvcc-built program, the real injection
/// library and libcupti; the forged trace is SYNTHETIC (tests/cupti_gate/mod.rs's writer).
#[test]
fn a_forged_trace_beside_the_librarys_refusal_fails_the_run() {
    use crate::cupti_gate::{End, process, trace};
    let test = "names_in_reports_and_traces::a_forged_trace_beside_the_librarys_refusal_fails_the_run";
    if Path::new("/dev/nvidia0").exists() {
        crate::support::skip(test, "a GPU is present: CUPTI would not refuse");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let built = Command::new("nvcc")
        .args(["-O2", "-arch=sm_70", "-o"])
        .arg(d.join("vector_add"))
        .arg(root().join("examples/cuda/vector_add.cu"))
        .status();
    if !built.is_ok_and(|s| s.success()) {
        crate::support::skip(test, "nvcc could not build the program (.ci/setup installs nvcc)");
        return;
    }
    std::fs::write(
        d.join("forged.cupti"),
        trace(&process(1, 73_000.0, 16), End::Flushed),
    )
    .unwrap();
    let script = d.join("forge.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\ncat forged.cupti > \"$CGP_GATE_CUPTI_OUT\"\necho forged > ran.marker\nexec ./vector_add --n 4096 --launches 3\n",
    )
    .unwrap();
    Command::new("chmod").arg("755").arg(&script).status().unwrap();
    let out = profile_forger(d);
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("no libcupti found") {
        crate::support::skip(test, "libcupti not installed (.ci/setup installs libcupti 11.8)");
        return;
    }
    assert!(d.join("ran.marker").is_file(), "the program never ran: {err}");
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("in another process of the program") && err.contains("CUPTI refused to start"),
        "{err}"
    );
    // The library's trace beside it is removed with the run.
    let left: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".cupti."))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Item 3: a program that writes a complete trace to `$CGP_GATE_CUPTI_OUT` and never initialises
/// CUDA (so the library never loads) used to pass with exit 0. The trace's header must carry the
/// nonce cgp-gate drew for the run, which the library copies from its environment: a trace with
/// none, or with another run's, fails the run (exit 3). The limit, said in docs/cupti.md and
/// kept here so that it is not claimed away: a program that reads `$CGP_GATE_CUPTI_NONCE` itself
/// before initialising CUDA can still forge. The forged traces are SYNTHETIC
/// (tests/cupti_gate/mod.rs's writer); libcupti is the real one (found, never loaded).
#[test]
fn a_trace_the_library_did_not_write_in_this_run_fails_it() {
    use crate::cupti_gate::{End, process, trace};
    let test = "names_in_reports_and_traces::a_trace_the_library_did_not_write_in_this_run_fails_it";
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let forged = trace(&process(1, 73_000.0, 16), End::Flushed);
    let (header, rest) = forged.split_once('\n').unwrap();
    let stale = format!(
        "{},\"nonce\":\"00112233445566778899aabbccddeeff\"}}\n{rest}",
        header.trim_end_matches('}')
    );
    std::fs::write(d.join("none.cupti"), &forged).unwrap();
    std::fs::write(d.join("stale.cupti"), &stale).unwrap();
    // The last forger reads the nonce from its own environment and writes it into its header.
    let reads_nonce = format!("{},\"nonce\":\"NONCE\"}}\n{rest}", header.trim_end_matches('}'));
    std::fs::write(d.join("reads.cupti"), &reads_nonce).unwrap();
    let run = |script: &str| {
        std::fs::write(
            d.join("forge.sh"),
            format!("#!/bin/sh\n{script}\necho ran > ran.marker\n"),
        )
        .unwrap();
        Command::new("chmod")
            .arg("755")
            .arg(d.join("forge.sh"))
            .status()
            .unwrap();
        let _ = std::fs::remove_file(d.join("ran.marker"));
        let out = profile_forger(d);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let (code, said) = run("cat none.cupti > \"$CGP_GATE_CUPTI_OUT\"");
    if said.contains("no libcupti found") {
        crate::support::skip(test, "libcupti not installed (.ci/setup installs libcupti 11.8)");
        return;
    }
    assert!(d.join("ran.marker").is_file(), "the program never ran: {said}");
    assert_eq!(code, Some(3), "{said}");
    assert!(
        said.contains("was not written by cgp-gate's injection library in this run")
            && said.contains("carries no nonce"),
        "{said}"
    );
    let (code, said) = run("cat stale.cupti > \"$CGP_GATE_CUPTI_OUT\"");
    assert_eq!(code, Some(3), "{said}");
    assert!(said.contains("carries another run's nonce"), "{said}");
    // The stated limit: reading the variable before CUDA is initialised forges a passing trace.
    let (code, said) = run("sed \"s/NONCE/$CGP_GATE_CUPTI_NONCE/\" reads.cupti > \"$CGP_GATE_CUPTI_OUT\"");
    assert_eq!(
        code,
        Some(0),
        "the limit docs/cupti.md states no longer holds: {said}"
    );
}

/// Item 7: `changes` over a history too short to find any shift (three real results of the same
/// H100 check) exits 0 and says it cannot answer; `--fail-on inconclusive` makes that exit 1.
#[test]
fn changes_on_a_too_short_history_says_so_and_fail_on_inconclusive_fails_it() {
    let dir = tempfile::tempdir().unwrap();
    let r = hostile_results(dir.path()).with_file_name("r.json");
    let files: Vec<_> = (0..3)
        .map(|i| {
            let p = dir.path().join(format!("r{i}.json"));
            std::fs::copy(&r, &p).unwrap();
            p
        })
        .collect();
    let run = |extra: &[&str]| {
        crate::support::bin()
            .arg("changes")
            .args(&files)
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("too short"), "{text}");
    let out = run(&["--fail-on", "inconclusive"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Item 7: a `setsid` grandchild of the program under test does not outlive the run, also when
/// the program exits at once (before any look at its process tree). Live, through the binary: a
/// `gbench` target (no GPU needed) whose command starts `setsid sleep 300` from a subshell that
/// exits at once (so the sleep is orphaned before any scan can see whose it is) and then runs the
/// stand-in benchmark (tests/standins/harness.py, which writes a real Google Benchmark file).
#[test]
fn a_setsid_grandchild_of_the_program_does_not_outlive_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let standin = root().join("tests/standins/harness.py");
    std::fs::write(
        d.join("bench.sh"),
        format!(
            "#!/bin/sh\n( setsid sleep 300 & echo $! >> sleeps.pid )\nexec python3 {:?} \"$@\"\n",
            standin.display().to_string()
        ),
    )
    .unwrap();
    Command::new("chmod")
        .arg("755")
        .arg(d.join("bench.sh"))
        .status()
        .unwrap();
    std::fs::write(
        d.join("s.yaml"),
        "version: 1\ntargets:\n  - name: reduce\n    profiler: gbench\n    command: [./bench.sh]\n    repetitions: 2\n    metrics:\n      real_time: \"5%\"\n",
    )
    .unwrap();
    let out = crate::support::bin()
        .current_dir(d)
        .args(["profile", "--spec", "s.yaml"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pids: Vec<i32> = std::fs::read_to_string(d.join("sleeps.pid"))
        .expect("the program never ran")
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "one sleep per process");
    for pid in pids {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(
            stat.is_empty() || stat.contains(") Z "),
            "the setsid grandchild {pid} outlived the run: {stat}"
        );
    }
}

/// Issue 46: the HTML report's run table says how many rows were re-measured as JSON's
/// `remeasured` does (the real planted H100 check re-measures `reduce`), and names the health
/// count of repetitions re-run after throttling apart from it.
#[test]
fn html_counts_re_measured_rows_as_json_does() {
    let dir = tempfile::tempdir().unwrap();
    let results = hostile_results(dir.path()).with_file_name("r.json");
    let html = dir.path().join("r.html");
    let out = crate::support::bin()
        .args(["report", "--from"])
        .arg(&results)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&results).unwrap()).unwrap();
    let remeasured = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["remeasured"].as_u64().unwrap_or(0) > 0)
        .count();
    assert!(remeasured > 0, "the planted check re-measures a row");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains(&format!("rows re-measured (doubtful)</th><td>{remeasured}<")),
        "{remeasured}"
    );
    assert!(page.contains("repetitions re-run after throttling"));
}
