//! `cgp-gate validate` and `cgp-gate schema` against real spec files: every error class exits 2
//! with `file:line:column: message`, and the fixtures load into the values they say.

use std::path::{Path, PathBuf};
use std::time::Duration;

use cgp_core::foundation::units::Quantity;
use cgp_spec::spec::{
    self, CacheControl, ClockControl, ClockSetting, Direction, KernelFilter, ReplayMode, ThresholdKind,
};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/specs")
        .join(name)
}

/// A minimal valid target, for cases that break something else.
const TARGET: &str =
    "targets:\n  - name: a\n    command: [./a]\n    metrics: {gpu__time_duration.sum: \"3%\"}\n";

struct Case {
    name: &'static str,
    yaml: String,
    /// Expected 1-based line and column, or `None` for errors without a position.
    at: Option<(usize, usize)>,
    /// The start of the message after `file:line:col: `.
    message: &'static str,
    /// A fragment of the `help:` line, when it matters.
    help: Option<&'static str>,
}

fn case(name: &'static str, yaml: impl Into<String>, at: (usize, usize), message: &'static str) -> Case {
    Case {
        name,
        yaml: yaml.into(),
        at: Some(at),
        message,
        help: None,
    }
}

impl Case {
    fn help(mut self, h: &'static str) -> Self {
        self.help = Some(h);
        self
    }
}

/// A spec with one target whose body (indented by 4) is `body`.
fn target(body: &str) -> String {
    format!("version: 1\ntargets:\n  - name: a\n{body}")
}

/// As [`target`], with a valid `metrics:` line after `body` (positions in `body` are unchanged).
fn target_m(body: &str) -> String {
    target(&format!(
        "{body}    metrics: {{gpu__time_duration.sum: \"3%\"}}\n"
    ))
}

fn cases() -> Vec<Case> {
    vec![
        // --- yaml and top level
        case("yaml syntax", "version: 1\ntargets: [a, b\nx: 1\n", (3, 2), "invalid yaml:"),
        case("second document", format!("version: 1\n{TARGET}---\nversion: 1\n"), (6, 1), "the spec must be a single yaml document"),
        case("unsupported tag", format!("version: 1\n{TARGET}settings: !!map {{}}\n"), (6, 11), "yaml tag `!!map` is not supported"),
        case("missing version", TARGET, (1, 1), "the spec has no `version`").help("add `version: 1`"),
        case("unsupported version", format!("version: 2\n{TARGET}"), (1, 10), "unsupported spec version 2").help("reads version 1 only"),
        case("version as text", format!("version: \"1\"\n{TARGET}"), (1, 10), "`version` must be the number 1, found `1`"),
        case("not a mapping", "- version: 1\n", (1, 1), "the spec must be a mapping, found a list"),
        case("unknown top key", format!("version: 1\n{TARGET}target: []\n"), (6, 1), "unknown key `target` in the spec").help("did you mean `targets`?"),
        case("no targets", "version: 1\n", (1, 1), "the spec has no `targets:`"),
        case("empty targets", "version: 1\ntargets: []\n", (2, 10), "`targets` is empty"),
        case("targets not a list", "version: 1\ntargets: {a: 1}\n", (2, 10), "`targets` must be a list, found a mapping"),
        case("duplicate top key", format!("version: 1\n{TARGET}version: 1\n"), (6, 1), "duplicate key `version` in the spec").help("already set on line 1"),
        // --- settings
        case("unknown settings key", format!("version: 1\nsettings: {{alpah: 0.1}}\n{TARGET}"), (2, 12), "unknown key `alpah` in `settings`").help("did you mean `alpha`?"),
        case("alpha out of range", format!("version: 1\nsettings: {{alpha: 2}}\n{TARGET}"), (2, 19), "`settings.alpha` must be in (0, 1), found 2"),
        case("history zero", format!("version: 1\nsettings: {{history: 0}}\n{TARGET}"), (2, 21), "`settings.history` must be at least 1"),
        case("alpha wrong type", format!("version: 1\nsettings: {{alpha: low}}\n{TARGET}"), (2, 19), "`settings.alpha` must be a number, found `low`"),
        case("unknown fingerprint field", format!("version: 1\nsettings: {{fingerprint_fields: [gpu_nam]}}\n{TARGET}"), (2, 33), "unknown fingerprint field `gpu_nam`").help("did you mean `gpu_name`?"),
        // --- defaults
        case("defaults with name", format!("version: 1\ndefaults: {{name: x}}\n{TARGET}"), (2, 12), "`defaults` cannot set `name`"),
        case("unknown defaults key", format!("version: 1\ndefaults: {{metric: {{}}}}\n{TARGET}"), (2, 12), "unknown key `metric` in `defaults`").help("did you mean `metrics`?"),
        case("bad default reported at `defaults`", format!("version: 1\ndefaults: {{timeout: 5}}\n{TARGET}"), (2, 21), "`timeout` of `defaults` has no unit: `5`").help("`5s`"),
        // --- targets
        case("unknown target key", target("    command: [./a]\n    repetiton: 3\n    metrics: {gpu__time_duration.sum: \"3%\"}\n"), (5, 5), "unknown key `repetiton` in `targets[0]`").help("did you mean `repetitions`?"),
        case("target without name", "version: 1\ntargets:\n  - command: [./a]\n", (3, 5), "`targets[0]` has no `name`"),
        case("bad target name", "version: 1\ntargets:\n  - name: a/b\n", (3, 11), "target name `a/b` has characters that cannot be used"),
        case(
            "duplicate target name",
            format!("version: 1\n{TARGET}  - name: a\n    command: [./b]\n    metrics: {{gpu__time_duration.sum: \"3%\"}}\n"),
            (6, 11),
            "duplicate target name `a`",
        )
        .help("target on line 3"),
        case("wrong type", target_m("    command: [./a]\n    repetitions: many\n"), (5, 18), "`repetitions` of target `a` must be a whole number >= 0, found `many`"),
        case("too few repetitions", target_m("    command: [./a]\n    repetitions: 0\n"), (5, 18), "`repetitions` of target `a` must be at least 1, found 0"),
        case("max below repetitions", target_m("    command: [./a]\n    repetitions: 5\n    max_repetitions: 4\n"), (6, 22), "`max_repetitions` of target `a` (4) is less than `repetitions` (5)"),
        case("baseline below repetitions", target_m("    command: [./a]\n    repetitions: 5\n    baseline_repetitions: 4\n"), (6, 27), "`baseline_repetitions` of target `a` (4) is less than `repetitions` (5)"),
        case("launch count zero", target("    command: [./a]\n    launch_count: 0\n"), (5, 19), "`launch_count` of target `a` must be at least 1"),
        case("bad enum", target_m("    command: [./a]\n    cache_control: some\n"), (5, 20), "`cache_control` of target `a` must be one of `all` or `none`, found `some`"),
        case("empty cwd", target("    command: [./a]\n    cwd: \"\"\n"), (5, 10), "`cwd` of target `a` is empty"),
        case("empty nvtx list", target("    command: [./a]\n    nvtx: []\n"), (5, 11), "`nvtx` of target `a` is empty"),
        // --- command and placeholders
        case("missing command", target("    metrics: {gpu__time_duration.sum: \"3%\"}\n"), (3, 5), "target `a` has no `command`"),
        case("command as a string", target("    command: ./a --n {n}\n"), (4, 14), "`command` of target `a` must be a list of arguments").help("`command: [./a, --n, \"{n}\"]`"),
        case("empty command", target("    command: []\n"), (4, 14), "`command` of target `a` is empty"),
        case("unquoted placeholder", target("    command: [./a, {n}]\n    sizes: [{n: 1}]\n"), (4, 20), "argument 2 of the `command` of target `a` is a yaml mapping, not text").help("quote the placeholder: `\"{n}\"`"),
        case(
            "placeholder missing in a size",
            target("    command: [./a, \"{n}\"]\n    sizes:\n      - {n: 1}\n      - {m: 2}\n"),
            (4, 20),
            "placeholder `{n}` in the `command` of target `a` has no value: size `m=2` (line 7) has no `n`",
        ),
        case("placeholder without sizes", target("    command: [./a, \"--n={n}\"]\n"), (4, 20), "placeholder `{n}` in the `command` of target `a` has no value: target `a` has no `sizes`"),
        case("unclosed placeholder", target("    command: [./a, \"{n\"]\n"), (4, 20), "in the `command` of target `a`: unclosed `{`"),
        // --- sizes
        case("empty sizes", target("    command: [./a]\n    sizes: []\n"), (5, 12), "`sizes` of target `a` is empty").help("omit `sizes`"),
        case("sizes scalar", target("    command: [./a]\n    sizes: 5\n"), (5, 12), "`sizes` of target `a` must be a list or a mapping, found the number `5`"),
        case("matrix typo", target("    command: [./a]\n    sizes: {matrx: {n: [1]}}\n    metrics: {gpu__time_duration.sum: \"3%\"}\n"), (5, 13), "unknown key `matrx` in `sizes` of target `a`").help("did you mean `matrix`?"),
        case("matrix axis empty", target("    command: [./a]\n    sizes: {matrix: {n: []}}\n"), (5, 25), "parameter `n` in `sizes.matrix` of target `a` has no values"),
        case("duplicate size", target("    command: [./a]\n    sizes: [{n: 1}, {n: 1}]\n"), (5, 21), "size `n=1` of target `a` is listed twice"),
        case("bad size value", target("    command: [./a]\n    sizes: [{n: a/b}]\n"), (5, 17), "the value `a/b` of parameter `n` in target `a` contains `/`"),
        case("bad parameter name", target("    command: [./a]\n    sizes: [{1n: 1}]\n"), (5, 14), "`1n` in the sizes of target `a` is not a parameter name"),
        // --- kernel
        case("bad regex", target("    command: [./a]\n    kernel: \"regex:gemm_(\"\n"), (5, 13), "bad regex `gemm_(` in the `kernel` of target `a`"),
        case("empty kernel", target("    command: [./a]\n    kernel: \"\"\n"), (5, 13), "`kernel` of target `a` is empty"),
        // --- env
        case("env not a map", target("    command: [./a]\n    env: [A=1]\n"), (5, 10), "`env` of target `a` must be a mapping, found a list"),
        case("env bad name", target("    command: [./a]\n    env: {1A: x}\n"), (5, 11), "`1A` in the `env` of target `a` is not an environment variable name"),
        case("env null value", target("    command: [./a]\n    env: {A: }\n"), (5, 11), "environment variable `A` of target `a` has no value").help("`\"\"`"),
        case("env nested value", target("    command: [./a]\n    env: {A: {b: 1}}\n"), (5, 14), "the value of environment variable `A` of target `a` must be text, found a mapping"),
        // --- timeout
        case("timeout without unit", target_m("    command: [./a]\n    timeout: 300\n"), (5, 14), "`timeout` of target `a` has no unit: `300`").help("`300s`"),
        case("timeout bad unit", target_m("    command: [./a]\n    timeout: 5 days\n"), (5, 14), "bad `timeout` of target `a`: unknown unit `days` in `5 days`"),
        case("timeout zero", target_m("    command: [./a]\n    timeout: 0s\n"), (5, 14), "bad `timeout` of target `a`: `0s` is not longer than zero"),
        // --- clocks
        case("clock control conflicts with nvml", target_m("    command: [./a]\n    clocks: nvml-base\n    clock_control: base\n"), (6, 20), "`clock_control: base` conflicts with `clocks: nvml-base` in target `a`").help("remove `clock_control`"),
        case("clock control conflicts with fixed", target_m("    command: [./a]\n    clocks: {sm_mhz: 1400, mem_mhz: 1200}\n    clock_control: base\n"), (6, 20), "`clock_control: base` conflicts with `clocks: fixed clocks`"),
        case("unknown clocks", target_m("    command: [./a]\n    clocks: boost\n"), (5, 13), "`clocks` of target `a` must be one of `ncu`, `nvml-base`, `nvml-max` or `none`, found `boost`").help("sm_mhz"),
        case("fixed clocks incomplete", target_m("    command: [./a]\n    clocks: {sm_mhz: 1400}\n"), (5, 13), "`clocks` of target `a` has no `mem_mhz`"),
        // --- metrics and thresholds
        case("missing metrics", target("    command: [./a]\n"), (3, 5), "target `a` has no `metrics`"),
        case("empty metrics", target("    command: [./a]\n    metrics: {}\n"), (5, 14), "`metrics` of target `a` is empty"),
        case("bare number threshold", target("    command: [./a]\n    metrics: {gpu__time_duration.sum: 3}\n"), (5, 39), "the threshold of `gpu__time_duration.sum` is a bare number `3`").help("`\"3%\"`"),
        case("zero percent", target("    command: [./a]\n    metrics: {gpu__time_duration.sum: \"0%\"}\n"), (5, 39), "relative threshold `0%` in the threshold of `gpu__time_duration.sum` must be greater than 0%"),
        case("threshold word", target("    command: [./a]\n    metrics: {gpu__time_duration.sum: strict}\n"), (5, 39), "the threshold of `gpu__time_duration.sum` cannot be `strict`").help("`exact`"),
        case("threshold two rules", target("    command: [./a]\n    metrics: {gpu__time_duration.sum: {min: 1, max: 2}}\n"), (5, 48), "the threshold of `gpu__time_duration.sum` has more than one rule: `min` or `max`"),
        case("threshold bad quantity", target("    command: [./a]\n    metrics: {gpu__time_duration.sum: {max: 5 parsecs}}\n"), (5, 45), "`max` in the threshold of `gpu__time_duration.sum`: unknown unit `parsecs`"),
        case("threshold unknown key", target("    command: [./a]\n    metrics: {gpu__time_duration.sum: {relativ: 3%}}\n"), (5, 40), "unknown key `relativ` in the threshold of `gpu__time_duration.sum`").help("did you mean `relative`?"),
        case("unknown direction", target("    command: [./a]\n    metrics: {launch__grid_size: \"3%\"}\n"), (5, 34), "cgp-gate does not know whether lower or higher is better for `launch__grid_size`").help("direction: lower"),
        case("base metric name", target("    command: [./a]\n    metrics: {sm__throughput: \"3%\"}\n"), (5, 15), "`sm__throughput` is a base metric name, which ncu cannot evaluate").help("`sm__throughput.sum`"),
        case("breakdown metric", target("    command: [./a]\n    metrics:\n      \"breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed\": \"3%\"\n"), (6, 7), "metric `breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed` uses the `breakdown:` form"),
        case("not a metric name", target("    command: [./a]\n    metrics: {duration: \"3%\"}\n"), (5, 15), "`duration` is not an ncu metric name"),
        case("uppercase metric", target("    command: [./a]\n    metrics: {GPU__time_duration.sum: \"3%\"}\n"), (5, 15), "metric `GPU__time_duration.sum` has uppercase letters"),
        case("unknown derived metric", target("    command: [./a]\n    metrics: {cgp__achieved_flop.per_second: \"3%\"}\n"), (5, 15), "unknown derived metric `cgp__achieved_flop.per_second`").help("did you mean `cgp__achieved_flops.per_second`?"),
        case("derived without flops", target("    command: [./a]\n    metrics: {cgp__achieved_flops.per_second: \"3%\"}\n"), (5, 15), "derived metric `cgp__achieved_flops.per_second` needs `flops:` on target `a`"),
        case("intensity without both", target("    command: [./a]\n    flops: \"2\"\n    metrics: {cgp__arithmetic_intensity: \"3%\"}\n"), (6, 15), "derived metric `cgp__arithmetic_intensity` needs `bytes:` on target `a`"),
        // --- flops / bytes
        case("bad expression", target("    command: [./a]\n    sizes: [{n: 1}]\n    flops: 2*n^2\n"), (6, 12), "bad `flops` expression `2*n^2` in target `a`: `^` at character 4 is not allowed"),
        case("expression parameter missing", target("    command: [./a]\n    sizes: [{n: 1}, {m: 2}]\n    bytes: 4*n\n"), (6, 12), "`bytes` of target `a` uses parameter `n`, but size `m=2` (line 5) does not define it"),
        case("expression parameter not numeric", target("    command: [./a]\n    sizes: [{n: big}]\n    bytes: 4*n\n"), (6, 12), "`bytes` of target `a`: parameter `n` is `big` in size `n=big`, not a number"),
    ]
}

#[test]
fn every_spec_error_class_exits_2_with_file_line_column() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (i, c) in cases().into_iter().enumerate() {
        let path = dir.path().join(format!("case{i}.yaml"));
        std::fs::write(&path, &c.yaml).unwrap();
        let out = crate::support::bin()
            .args(["validate", "--spec"])
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let prefix = match c.at {
            Some((l, col)) => format!("error: {}:{l}:{col}: ", path.display()),
            None => format!("error: {}: ", path.display()),
        };
        let expected = format!("{prefix}{}", c.message);
        let mut problems = Vec::new();
        if out.status.code() != Some(2) {
            problems.push(format!("exit code {:?}", out.status.code()));
        }
        // Every independent error is reported in one run: the case's error is one of them.
        if !stderr.lines().any(|l| l.starts_with(&expected)) {
            problems.push(format!("expected an error line starting with\n    {expected}"));
        }
        if let Some(h) = c.help
            && !stderr
                .lines()
                .any(|l| l.trim_start().starts_with("help:") && l.contains(h))
        {
            problems.push(format!("expected a help line containing {h:?}"));
        }
        if !problems.is_empty() {
            failures.push(format!(
                "case `{}`: {}\n  got: {stderr}",
                c.name,
                problems.join("; ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn empty_and_missing_files_are_invalid_input() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.yaml");
    std::fs::write(&empty, "# nothing yet\n").unwrap();
    crate::support::bin()
        .args(["validate", "--spec"])
        .arg(&empty)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!(
            "{}: the spec is empty",
            empty.display()
        )));
    let missing = dir.path().join("missing.yaml");
    crate::support::bin()
        .args(["validate", "--spec"])
        .arg(&missing)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!(
            "{}: cannot read the spec",
            missing.display()
        )));
}

#[test]
fn valid_specs_pass_validate_with_a_summary() {
    let path = fixture("examples.yaml");
    crate::support::bin()
        .args(["validate", "--spec"])
        .arg(&path)
        .assert()
        .code(0)
        // vector_add 2 sizes, matmul 4, reduce 2; metrics 3 + 4 + 2 (reduce takes the defaults).
        .stdout(format!(
            "{}: ok (3 targets, 8 sizes, 9 metrics)\n",
            path.display()
        ));
    crate::support::bin()
        .args(["validate", "--spec"])
        .arg(fixture("valid_full.yaml"))
        .assert()
        .code(0);
}

#[test]
#[expect(
    clippy::float_cmp,
    reason = "values parsed from the same decimal text are bit-identical"
)]
fn valid_full_loads_every_key() {
    let path = fixture("valid_full.yaml");
    let s = spec::load(&path).unwrap();
    assert_eq!(s.path, path);
    assert_eq!(s.hash.len(), 64);
    assert_eq!(s.settings.alpha, 0.05);
    assert_eq!(s.settings.confidence, 0.9);
    assert_eq!(s.settings.history, 20);
    assert_eq!(
        s.settings.fingerprint_fields,
        ["gpu_name", "driver_version", "ncu_version", "clocks"]
    );
    assert_eq!(s.settings.min_clock_fraction, 0.85);
    assert_eq!(s.settings.max_throttle_reruns, 3);
    assert_eq!(s.targets.len(), 3);

    let g = s.target("gemm").unwrap();
    assert_eq!(
        g.command,
        [
            "./gemm",
            "--m",
            "{m}",
            "--n",
            "{n}",
            "--k",
            "{k}",
            "--label={{m}}"
        ]
    );
    assert_eq!(
        g.cwd.as_deref(),
        Some(path.parent().unwrap().join("build").as_path())
    );
    assert_eq!(g.env.get("CUDA_VISIBLE_DEVICES").map(String::as_str), Some("0"));
    assert_eq!(g.env.get("CGP_MODE").map(String::as_str), Some("bench"));
    assert!(matches!(&g.kernel, Some(KernelFilter::Regex(r)) if r.as_str() == "^gemm_.*"));
    assert_eq!(g.nvtx, ["bench@timed/", "regex:warm.*/"]);
    assert_eq!((g.launch_skip, g.launch_count), (Some(2), Some(1)));
    // Matrix: key order, last key fastest.
    let keys: Vec<String> = g.sizes.iter().map(spec::Size::key).collect();
    assert_eq!(
        keys,
        [
            "m=64,n=256,k=32",
            "m=64,n=256,k=64",
            "m=128,n=256,k=32",
            "m=128,n=256,k=64"
        ]
    );
    assert_eq!(
        spec::render_command(&g.command, &g.sizes[1]).unwrap(),
        ["./gemm", "--m", "64", "--n", "256", "--k", "64", "--label={m}"]
    );
    assert_eq!(g.flops.as_deref(), Some("2*m*n*k"));
    assert_eq!(
        spec::evaluate(g.flops.as_deref().unwrap(), &g.sizes[0]).unwrap(),
        2.0 * 64.0 * 256.0 * 32.0
    );
    assert_eq!(g.bytes.as_deref(), Some("4*(m*k + k*n + m*n)"));
    let names: Vec<&str> = g.metrics.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "gpu__time_duration.sum",
            "launch__registers_per_thread",
            "dram__bytes_read.sum",
            "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "launch__grid_size",
            "cgp__achieved_flops.per_second",
            "cgp__arithmetic_intensity",
        ]
    );
    let t = &g.metrics[0].threshold;
    assert_eq!(t.kind, ThresholdKind::Relative { fraction: 0.025 });
    assert_eq!(t.direction, Direction::Lower);
    assert_eq!(
        t.min_effect,
        Some(Quantity {
            value: 500.0,
            unit: "ns".into()
        })
    );
    assert_eq!(g.metrics[1].threshold.kind, ThresholdKind::Exact);
    assert_eq!(g.metrics[2].threshold.kind, ThresholdKind::Max { value: 4e6 });
    assert_eq!(g.metrics[3].threshold.kind, ThresholdKind::Min { value: 10.0 });
    assert_eq!(g.metrics[3].threshold.direction, Direction::Higher);
    assert_eq!(g.metrics[4].threshold.direction, Direction::Lower);
    assert_eq!(g.metrics[5].threshold.direction, Direction::Higher);
    assert_eq!((g.repetitions, g.max_repetitions), (6, 12));
    assert_eq!(g.timeout, Duration::from_secs(90));
    assert_eq!(g.clocks, ClockSetting::Ncu);
    assert_eq!(g.profiling.clock_control, ClockControl::Base);
    assert_eq!(g.profiling.cache_control, CacheControl::All);
    assert_eq!(g.profiling.replay_mode, ReplayMode::Kernel);

    let c = s.target("copy").unwrap();
    assert_eq!(c.cwd.as_deref(), Some(Path::new("/tmp")));
    assert!(c.env.is_empty(), "a target's env replaces the default's");
    assert!(matches!(&c.kernel, Some(KernelFilter::Exact(k)) if k == "copy_kernel"));
    assert_eq!(c.nvtx, ["copy/"]);
    assert_eq!(c.sizes.len(), 2);
    assert_eq!(c.sizes[1].get("bytes"), Some("16777216"));
    assert_eq!(c.metrics[0].threshold.kind, ThresholdKind::Min { value: 100e9 });
    assert_eq!(
        c.clocks,
        ClockSetting::Fixed {
            sm_mhz: 1410,
            mem_mhz: 1215
        }
    );
    assert_eq!(
        c.profiling.clock_control,
        ClockControl::None,
        "forced when cgp-gate locks clocks"
    );
    assert_eq!(c.profiling.cache_control, CacheControl::None);
    assert_eq!(c.profiling.replay_mode, ReplayMode::Application);
    assert_eq!(
        (c.repetitions, c.max_repetitions),
        (7, 14),
        "default repetitions, 2x max"
    );
    assert_eq!(c.timeout, Duration::from_secs(120));

    let i = s.target("idle").unwrap();
    assert_eq!(i.sizes, [spec::Size::default()]);
    assert_eq!(i.metrics.len(), 1, "metrics from defaults");
    assert_eq!(i.clocks, ClockSetting::NvmlBase);
    assert_eq!(i.profiling.clock_control, ClockControl::None);
    assert_eq!(i.profiling.replay_mode, ReplayMode::AppRange);
    assert_eq!(i.timeout, Duration::from_millis(500));
    assert_eq!(i.kernel.as_ref().map(ToString::to_string), None);
}

#[test]
fn defaults_apply_when_keys_are_omitted() {
    let s = spec::load_str(
        "version: 1\ntargets:\n  - name: t\n    command: [./t]\n    metrics: {gpu__time_duration.sum: \"3%\"}\n",
        Path::new("dir/cgp-gate.yaml"),
    )
    .unwrap();
    let t = &s.targets[0];
    assert_eq!(s.settings, spec::Settings::default());
    assert_eq!(
        (t.repetitions, t.max_repetitions, t.baseline_repetitions),
        (10, 20, 50)
    );
    assert_eq!(t.timeout, Duration::from_secs(300));
    assert_eq!(t.profiling, spec::Profiling::default());
    assert_eq!(t.clocks, ClockSetting::Ncu);
    assert_eq!(t.sizes, [spec::Size::default()]);
    assert!(t.cwd.is_none() && t.env.is_empty() && t.kernel.is_none() && t.nvtx.is_empty());
}

#[test]
fn clock_control_none_with_ncu_clocks_means_nobody_locks() {
    let s = spec::load_str(
        "version: 1\ntargets:\n  - name: t\n    command: [./t]\n    clock_control: none\n    metrics: {gpu__time_duration.sum: \"3%\"}\n",
        Path::new("s.yaml"),
    )
    .unwrap();
    assert_eq!(s.targets[0].clocks, ClockSetting::None);
    assert_eq!(s.targets[0].profiling.clock_control, ClockControl::None);
}

#[test]
fn hash_is_of_the_file_bytes() {
    let text = std::fs::read_to_string(fixture("examples.yaml")).unwrap();
    let a = spec::load_str(&text, Path::new("a.yaml")).unwrap();
    let b = spec::load_str(
        &format!("{text}\n# a comment changes the hash\n"),
        Path::new("a.yaml"),
    )
    .unwrap();
    assert_eq!(a.hash, spec::load(&fixture("examples.yaml")).unwrap().hash);
    assert_ne!(a.hash, b.hash);
}

fn schema_validator() -> jsonschema::Validator {
    let out = crate::support::bin().arg("schema").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

fn yaml_as_json(text: &str) -> serde_json::Value {
    yaml_serde::from_str(text).unwrap()
}

#[test]
fn schema_accepts_the_fixtures_and_rejects_unknown_keys() {
    let v = schema_validator();
    for name in ["valid_full.yaml", "examples.yaml"] {
        let doc = yaml_as_json(&std::fs::read_to_string(fixture(name)).unwrap());
        let errors: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
    }
    for bad in [
        format!("version: 1\n{TARGET}extra: 1\n"),
        target("    command: [./a]\n    repetiton: 3\n    metrics: {gpu__time_duration.sum: \"3%\"}\n"),
        target("    command: [./a]\n    metrics: {gpu__time_duration.sum: {relative: 3%, bogus: 1}}\n"),
        format!("version: 2\n{TARGET}"),
        target("    command: [./a]\n    clocks: boost\n    metrics: {gpu__time_duration.sum: \"3%\"}\n"),
    ] {
        assert!(!v.is_valid(&yaml_as_json(&bad)), "schema accepted:\n{bad}");
    }
}

#[test]
fn the_reference_example_is_valid() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/spec.md")).unwrap();
    let after = doc.split("## A complete example").nth(1).unwrap();
    let yaml = after
        .split("```yaml\n")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    let s = spec::load_str(yaml, Path::new("docs/spec.md")).unwrap();
    assert_eq!(s.targets.len(), 3);
    assert_eq!(s.target("reduce").unwrap().metrics.len(), 2);
}

proptest::proptest! {
    /// Damaged specs give an error (with a position inside the file when there is one), never a
    /// panic.
    #[test]
    fn damaged_specs_never_panic(cut in 0usize..4000, len in 0usize..40, insert in "[ -~\n]{0,3}") {
        let text = std::fs::read_to_string(fixture("valid_full.yaml")).unwrap();
        let chars: Vec<char> = text.chars().collect();
        let start = cut.min(chars.len());
        let end = (start + len).min(chars.len());
        let damaged: String = chars[..start].iter().chain(insert.chars().collect::<Vec<_>>().iter()).chain(chars[end..].iter()).collect();
        if let Err(e) = spec::load_str(&damaged, Path::new("d.yaml")) {
            let lines = damaged.lines().count().max(1);
            if let Some(l) = e.line {
                proptest::prop_assert!(l >= 1 && l <= lines + 1, "line {l} of {lines}: {e}");
            }
            proptest::prop_assert!(!e.message.is_empty());
        }
    }
}

/// `validate` on a spec written to a temporary file: (exit code, stdout, stderr). Without ncu on
/// the PATH (`CGP_GATE_NCU` pointing nowhere), so the built-in list of metric names is used.
fn validate_text(yaml: &str) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cgp-gate.yaml");
    std::fs::write(&path, yaml).unwrap();
    let out = crate::support::bin()
        .args(["validate", "--spec"])
        .arg(&path)
        .env("CGP_GATE_NCU", "/nonexistent/ncu")
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const ONE_TARGET: &str = "version: 1\ntargets:\n  - name: a\n    command: [./a]\n    metrics:\n";

/// Three independent mistakes in one spec: one run names all three, each with its line, and the
/// metric typo gets the nearest known name rather than "add a direction" (issue 24).
#[test]
fn every_independent_error_in_one_run() {
    let yaml = format!(
        "{ONE_TARGET}      gpu__time_duraton.sum: \"3%\"\n      dram__bytes_read.sum: 0.5\n      sm__throughput.avg.pct_of_peak_sustianed_elapsed: \"5%\"\n  - name: b\n    metrics: {{gpu__time_duration.sum: \"3%\"}}\n"
    );
    let (code, stdout, stderr) = validate_text(&yaml);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains(":6:30: unknown metric `gpu__time_duraton.sum`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("did you mean `gpu__time_duration.sum`?"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("does not know whether lower or higher"),
        "{stderr}"
    );
    // 0.5 could be 50% or 0.5%: it asks.
    assert!(
        stderr
            .contains(":7:29: the threshold of `dram__bytes_read.sum` is a bare number `0.5`: 50% or 0.5%?"),
        "{stderr}"
    );
    assert!(
        stderr.contains("write `\"50%\"` if 0.5 is a fraction, `\"0.5%\"` if it is a percentage"),
        "{stderr}"
    );
    // The second target has no command: its own error, in the same run.
    assert!(stderr.contains(":9:") && stderr.contains("`b`"), "{stderr}");
    assert_eq!(stderr.matches("error: ").count(), 3, "{stderr}");
    assert!(stderr.trim_end().ends_with("3 errors in the spec"), "{stderr}");
}

/// Issue 46: a placeholder without a size no longer hides the target's other errors, errors of
/// `defaults:` are reported once, at `defaults` (not as the first target's that inherits them),
/// and the other targets' errors come in the same run.
#[test]
fn placeholder_and_defaults_errors_do_not_hide_the_others() {
    let yaml = "version: 1\ndefaults:\n  repetitions: 0\n  timeout: 5x\ntargets:\n  - name: vadd\n    command: [./vadd, \"{m}\"]\n    kernel: \"regex:((\"\n    metrics: {gpu__time_duration.sum: \"5\"}\n  - name: other\n    command: [./o]\n    metrics: {gpu__time_duration.sum: \"5%\"}\n";
    let (code, stdout, stderr) = validate_text(yaml);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error: ")).collect();
    let want = [
        ":3:16: `repetitions` of `defaults` must be at least 1, found 0",
        ":4:12: bad `timeout` of `defaults`: unknown unit `x` in `5x`",
        ":7:23: placeholder `{m}` in the `command` of target `vadd` has no value: target `vadd` has no `sizes`",
        ":8:13: bad regex `((` in the `kernel` of target `vadd`",
        ":9:39: the threshold of `gpu__time_duration.sum` cannot be `5`",
    ];
    assert_eq!(errors.len(), want.len(), "{stderr}");
    for (got, want) in errors.iter().zip(want) {
        assert!(got.contains(want), "{got}\n  wanted {want}\n{stderr}");
    }
    assert!(!stderr.contains("of target `other`"), "{stderr}");
    assert!(stderr.trim_end().ends_with("5 errors in the spec"), "{stderr}");
    // A duplicate name and a bad name are kept too: the targets after them are still read.
    let yaml = format!(
        "{ONE_TARGET}      gpu__time_duration.sum: \"3%\"\n  - name: a\n    command: [./a]\n  - name: a/b\n  - name: c\n    command: [./c]\n    metrics: {{gpu__time_duration.sum: \"5\"}}\n"
    );
    let (code, _, stderr) = validate_text(&yaml);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(":7:11: duplicate target name `a`"), "{stderr}");
    assert!(stderr.contains(":9:11: target name `a/b`"), "{stderr}");
    assert!(
        stderr.contains(":12:39: the threshold of `gpu__time_duration.sum` cannot be `5`"),
        "{stderr}"
    );
}

/// A bare number below 1 is a fraction only where the percentage reading is below what a GPU
/// timing resolves (0.03 -> 3%, never 0.03%); the counts in the summary are singular for one.
#[test]
fn a_small_bare_number_is_a_fraction_and_counts_are_singular() {
    let yaml = format!("{ONE_TARGET}      gpu__time_duration.sum: 0.03\n");
    let (code, stdout, stderr) = validate_text(&yaml);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stdout.ends_with(": ok (1 target, 1 size, 1 metric)\n"),
        "{stdout}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.yaml");
    std::fs::write(&path, &yaml).unwrap();
    let s = spec::load(&path).unwrap();
    assert_eq!(
        s.targets[0].metrics[0].threshold.kind,
        ThresholdKind::Relative { fraction: 0.03 }
    );
    // 3 stays a question (3% or a bound).
    let (code, _, stderr) = validate_text(&format!("{ONE_TARGET}      gpu__time_duration.sum: 3\n"));
    assert_eq!(code, Some(2));
    assert!(stderr.contains("is a bare number `3`"), "{stderr}");
}

/// A metric name that is not known and is close to one that is: without ncu, a warning with the
/// nearest built-in name (the direction is known from the name, so the spec itself is valid).
#[test]
fn a_likely_metric_typo_gets_the_nearest_known_name_without_ncu() {
    let yaml = format!("{ONE_TARGET}      dram__bytes_raed.sum: \"1%\"\n");
    let (code, stdout, stderr) = validate_text(&yaml);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stderr.contains("warning: target `a`: metric `dram__bytes_raed.sum` is not one cgp-gate knows; did you mean `dram__bytes_read.sum`?"),
        "{stderr}"
    );
}
