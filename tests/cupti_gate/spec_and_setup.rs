//! A cupti target before any trace: spec errors naming the key, the JSON schema, `profile
//! --dry-run`'s pasteable environment, and no libcupti (exit 3).

use serde_json::Value;

use super::Case;

fn spec_error(yaml: &str) -> String {
    let c = Case::new(yaml);
    let (code, _, err) = c.cmd(&["validate", "--spec", "s.yaml"]);
    assert_eq!(code, 2, "{yaml}\n{err}");
    err
}

#[test]
fn spec_errors_name_the_key_and_what_to_do() {
    let head = "version: 1\ntargets:\n  - name: w\n    command: [./w]\n    profiler: cupti\n";
    let metrics = "    metrics:\n      gpu__time_duration.sum: \"5%\"\n";
    let e = spec_error(&format!("{head}    nvtx: [step]\n{metrics}"));
    assert!(
        e.contains("s.yaml:6:5: `nvtx` of target `w` only applies to Nsight Compute (`profiler: ncu`) targets, and this is a `profiler: cupti` target")
            && e.contains("select kernels with `kernel:`"),
        "{e}"
    );
    let e = spec_error(&format!("{head}    metrics:\n      dram__bytes.sum: \"5%\"\n"));
    assert!(
        e.contains("s.yaml:7:7: `dram__bytes.sum` of target `w` is a counter only Nsight Compute measures")
            && e.contains("`profiler: ncu`")
            && e.contains("explain: remeasure"),
        "{e}"
    );
    for (line, help) in [
        ("clock_control: base", "CUPTI does not lock clocks"),
        ("cache_control: none", "replays nothing"),
        ("replay_mode: application", "replays nothing"),
    ] {
        let e = spec_error(&format!("{head}    {line}\n{metrics}"));
        assert!(e.contains("s.yaml:6:5:") && e.contains(help), "{line}: {e}");
    }
    let e = spec_error(&format!("{head}    clocks: ncu\n{metrics}"));
    assert!(
        e.contains("`clocks: ncu` of target `w`") && e.contains("a `profiler: cupti` target"),
        "{e}"
    );
    // `libcupti` is cupti's: refused on an ncu target, and in `defaults` of a spec without one.
    let e = spec_error(&format!(
        "version: 1\ntargets:\n  - name: w\n    command: [./w]\n    libcupti: /x/libcupti.so\n{metrics}"
    ));
    assert!(
        e.contains("s.yaml:5:5: `libcupti` of target `w` only applies to `profiler: cupti` targets"),
        "{e}"
    );
    let e = spec_error(&format!(
        "version: 1\ndefaults:\n  libcupti: /x/libcupti.so\ntargets:\n  - name: w\n    command: [./w]\n{metrics}"
    ));
    assert!(e.contains("s.yaml:3:3: `libcupti` in `defaults` only applies to `profiler: cupti` targets, and the spec has none"), "{e}");
    // What cupti reads validates: launch configuration, derived metrics, explain, the filter.
    let c = Case::new(&format!(
        "{head}    kernel: regex:gemm\n    launch_skip: 1\n    launch_count: 3\n    explain: remeasure\n    flops: \"2\"\n    libcupti: lib/libcupti.so\n    metrics:\n      gpu__time_duration.sum: \"5%\"\n      launch__block_size: {{exact: true, direction: lower}}\n      launch__shared_mem_per_block_dynamic: exact\n      cgp__achieved_flops.per_second: \"5%\"\n"
    ));
    let (code, _, err) = c.cmd(&["validate", "--spec", "s.yaml"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn the_json_schema_knows_cupti() {
    let out = crate::support::bin().arg("schema").output().unwrap();
    let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let head = "version: 1\ntargets:\n  - name: w\n    command: [x]\n";
    for (yaml, ok) in [
        (
            "    profiler: cupti\n    kernel: gemm\n    libcupti: /l.so\n",
            true,
        ),
        ("    profiler: cupti\n    nvtx: [a]\n", false),
        ("    profiler: cupti\n    clocks: ncu\n", false),
        ("    profiler: cupti\n    categories: {a: b}\n", false),
        ("    profiler: ncu\n    libcupti: /l.so\n", false),
        ("    profiler: nsys\n    libcupti: /l.so\n", false),
    ] {
        let doc: Value = yaml_serde::from_str(&format!("{head}{yaml}")).unwrap();
        assert_eq!(v.is_valid(&doc), ok, "{yaml}");
    }
}

#[test]
fn dry_run_prints_the_added_environment_pasteably() {
    let c = Case::new(
        "version: 1\ntargets:\n  - name: w\n    command: [./w app, --n, \"{n}\"]\n    sizes: [{n: 4}]\n    profiler: cupti\n    repetitions: 2\n    metrics:\n      gpu__time_duration.sum: \"5%\"\n",
    );
    let lib = c.path("my lib/libcupti.so.12");
    std::fs::create_dir_all(lib.parent().unwrap()).unwrap();
    std::fs::write(&lib, b"").unwrap();
    let out = crate::support::bin()
        .current_dir(c.dir.path())
        .env("CGP_GATE_LIBCUPTI", &lib)
        .args(["profile", "--dry-run", "--spec", "s.yaml"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("w[n=4] x2: "))
        .unwrap_or_else(|| panic!("{text}"));
    // A shell splits it into the assignments and the argv.
    let words = shlex::split(line).unwrap();
    assert!(
        words[0].starts_with("CUDA_INJECTION64_PATH=/") && words[0].ends_with("libcgp_gate_cupti.so"),
        "{line}"
    );
    assert_eq!(words[1], format!("CGP_GATE_CUPTI_LIBRARY={}", lib.display()));
    // The trace: `<target>.cupti`, made absolute (the program may run elsewhere).
    assert!(
        words[2].starts_with("CGP_GATE_CUPTI_OUT=/") && words[2].ends_with("/w.cupti"),
        "{line}"
    );
    // The run's nonce: 32 hex digits (a pasted line runs with it; nobody checks a hand run).
    let nonce = words[3]
        .strip_prefix("CGP_GATE_CUPTI_NONCE=")
        .unwrap_or_else(|| panic!("{line}"));
    assert!(
        nonce.len() == 32 && nonce.chars().all(|c| c.is_ascii_hexdigit()),
        "{line}"
    );
    assert_eq!(&words[4..], ["./w app", "--n", "4"]);
    // The assignments stay assignments: only their values are quoted.
    assert!(line.contains("CGP_GATE_CUPTI_LIBRARY='"), "{line}");
}

#[test]
fn no_libcupti_is_exit_3_naming_cupti() {
    let c = Case::new(
        "version: 1\ntargets:\n  - name: w\n    command: [/bin/true]\n    profiler: cupti\n    repetitions: 1\n    libcupti: nowhere/libcupti.so\n    metrics:\n      gpu__time_duration.sum: \"5%\"\n",
    );
    let (code, _, err) = c.cmd(&["profile", "--spec", "s.yaml"]);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("CUPTI") && err.contains("nowhere/libcupti.so"),
        "{err}"
    );
}
