//! The command line's conveniences, end to end through the binary: `init` on every real ncu
//! capture of tests/fixtures/ncu-wild and on the example recordings (each written spec checked
//! by `validate`), `init -- PROGRAM` against the stand-in ncu.

use std::path::{Path, PathBuf};

use crate::support::root;
use assert_cmd::Command;

fn bin() -> Command {
    let mut c = crate::support::bin();
    c.env_remove("CGP_GATE_NCU").env("NO_COLOR", "1");
    c
}

/// The captures of tests/fixtures/ncu-wild, sorted.
fn wild_captures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("tests/fixtures/ncu-wild"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    v.sort();
    assert!(v.len() >= 10, "the ncu-wild fixtures are missing: {v:?}");
    v
}

/// Run `init --from FILE [-- COMMAND]` into a fresh directory; returns (dir, output).
fn init_from(file: &Path, command: &[&str]) -> (tempfile::TempDir, std::process::Output) {
    let dir = tempfile::tempdir().unwrap();
    let mut c = bin();
    c.current_dir(dir.path()).arg("init").arg("--from").arg(file);
    if !command.is_empty() {
        c.arg("--").args(command);
    }
    let out = c.output().unwrap();
    (dir, out)
}

fn validate(spec: &Path) {
    let out = bin().arg("validate").arg("--spec").arg(spec).output().unwrap();
    assert!(
        out.status.success(),
        "validate refused {}:\n{}\n{}",
        spec.display(),
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(spec).unwrap_or_default()
    );
}

/// The function names (what ncu's `-k` matches) of every launch in a capture, via `parse --json`.
fn launched_functions(file: &Path) -> Vec<String> {
    let out = bin().arg("parse").arg("--json").arg(file).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| cgp_gate::commands::init::function_name(l["kernel"].as_str().unwrap()))
        .collect()
}

/// The kernel names of every launch in a capture, as the CSV prints them, via `parse --json`.
fn launched_kernels(file: &Path) -> Vec<String> {
    let out = bin().arg("parse").arg("--json").arg(file).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["kernel"].as_str().unwrap().to_owned())
        .collect()
}

/// The `kernel:` value of a written spec, if any.
fn kernel_line(spec: &str) -> Option<String> {
    spec.lines()
        .find_map(|l| l.trim().strip_prefix("kernel: "))
        .map(|k| k.trim_matches('"').replace("\\\\", "\\"))
}

/// Captures that hold ncu's failure instead of launches (PROVENANCE.md: "a clear error, exit 2").
const NO_KERNELS: &[&str] = &["03_llmperf_error_only.csv", "10_moe_noprofiled_warning.csv"];

#[test]
fn init_from_every_real_capture_writes_a_spec_that_validates_and_selects_its_kernels() {
    for file in wild_captures() {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let (dir, out) = init_from(&file, &[]);
        let spec_path = dir.path().join("cgp-gate.yaml");
        let stderr = String::from_utf8_lossy(&out.stderr);
        if NO_KERNELS.contains(&name.as_str()) {
            assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
            assert!(
                stderr.contains(&name),
                "{name}: the error names the file: {stderr}"
            );
            assert!(
                !spec_path.exists(),
                "{name}: no spec is written from a failed capture"
            );
            continue;
        }
        assert_eq!(out.status.code(), Some(0), "{name}: {stderr}");
        validate(&spec_path);
        let spec = std::fs::read_to_string(&spec_path).unwrap();
        // The duration the capture holds (`gpu__time_duration.avg` when that is all it has).
        assert!(
            spec.contains("      gpu__time_duration.sum: \"3%\"\n")
                || spec.contains("      gpu__time_duration.avg: \"3%\"\n"),
            "{name}:\n{spec}"
        );
        // A library operation (`kernels: sum`, a cuBLAS capture) gates no registers: they do not
        // add up over kernels; nor does a spec from a capture without them in every launch.
        let text = std::fs::read_to_string(&file).unwrap();
        let registers_everywhere =
            text.contains("launch__registers_per_thread") || text.contains("\"Registers Per Thread\"");
        assert_eq!(
            spec.contains("      launch__registers_per_thread: exact\n"),
            !spec.contains("    kernels: sum\n") && registers_everywhere,
            "{name}:\n{spec}"
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("cgp-gate baseline update"), "{name}: {stdout}");
        assert!(stdout.contains("cgp-gate check"), "{name}: {stdout}");
        // The filter selects exactly the kernels the spec marks `+` (gated), by the rule live ncu
        // and replay share (docs/spec.md, "Selecting kernels"): replayed, the spec profiles the
        // kernels init proposed, and never a fragment of a name.
        let functions = launched_functions(&file);
        match kernel_line(&spec) {
            Some(_) => {
                let loaded = cgp_spec::spec::load(&spec_path).unwrap();
                let filter = loaded.targets[0].kernel.clone().unwrap();
                let listed: Vec<(&str, bool)> = spec
                    .lines()
                    .filter_map(|l| {
                        let l = l.trim_start().strip_prefix("#  ")?;
                        let gated = l.starts_with('+');
                        l.get(2..).map(|rest| (rest, gated))
                    })
                    .collect();
                assert!(!listed.is_empty(), "{name}:\n{spec}");
                for kernel in launched_kernels(&file) {
                    let key = cgp_core::measured::samples::kernel_key(&kernel);
                    let Some((_, gated)) = listed.iter().find(|(l, _)| l.starts_with(key.as_str())) else {
                        continue; // beyond the listed 40
                    };
                    assert_eq!(
                        cgp_profile::profile::filter::matches(&filter, &kernel),
                        *gated,
                        "{name}: `kernel: {filter}` and `{kernel}` (gated: {gated})\n{spec}"
                    );
                }
            }
            None => assert!(
                functions.iter().all(|f| f == "range"),
                "{name}: only NVTX range results may leave `kernel:` out:\n{spec}"
            ),
        }
    }
}

#[test]
fn init_names_the_program_from_the_connected_line_or_writes_a_placeholder() {
    let wild = root().join("tests/fixtures/ncu-wild");
    let (dir, out) = init_from(&wild.join("18_winpy_t4_metrics_RECONSTRUCTED.csv"), &[]);
    assert!(out.status.success());
    let spec = std::fs::read_to_string(dir.path().join("cgp-gate.yaml")).unwrap();
    assert!(
        spec.contains(r#"command: ["C:\\Python311\\python.exe"]"#),
        "{spec}"
    );
    assert!(spec.contains("  - name: python\n"), "{spec}");
    assert!(
        // cuBLAS's `volta_sgemm_128x32_nn` is matched by its family (init: library kernels).
        spec.contains("kernel: \"regex:_5x_cudnn_volta_scudnn_128x64_relu_xregs_large_nn_v1|nvjet|gemm|xmma|cutlass|_5x_cudnn_volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1\""),
        "{spec}"
    );

    // 16 has a Connected line without a path (2020-era ncu): the placeholder, which validates.
    let (dir, out) = init_from(&wild.join("16_rodinia_v100_2020_hotspot.csv"), &[]);
    assert!(out.status.success());
    let spec = std::fs::read_to_string(dir.path().join("cgp-gate.yaml")).unwrap();
    assert!(spec.contains("command: [./path/to/your/benchmark]"), "{spec}");
    assert!(spec.contains("kernel: calculate_temp\n"), "{spec}");
    assert!(
        spec.contains("calculate_temp     1 launch      51.36 us  40 registers  100.0%"),
        "{spec}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("replace `./path/to/your/benchmark`"), "{stdout}");
}

#[test]
fn init_from_every_example_recording_with_its_command_line() {
    for target in ["vector_add", "matmul", "reduce"] {
        let dir = root().join("examples/recordings/main").join(target);
        for size in std::fs::read_dir(&dir).unwrap() {
            let size = size.unwrap().path();
            let n = size
                .file_name()
                .unwrap()
                .to_string_lossy()
                .trim_start_matches("n=")
                .to_owned();
            let program = format!("./build/{target}");
            let (out_dir, out) = init_from(&size.join("0.csv"), &[&program, "--n", &n, "--launches", "3"]);
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let spec_path = out_dir.path().join("cgp-gate.yaml");
            validate(&spec_path);
            let spec = std::fs::read_to_string(&spec_path).unwrap();
            // `--launches` is a loop count: it stays in the command, out of the sizes.
            assert!(
                spec.contains(&format!(
                    "command: [{program}, --n, \"{{n}}\", --launches, \"3\"]"
                )),
                "{spec}"
            );
            assert!(spec.contains(&format!("      - {{ n: {n} }}\n")), "{spec}");
            assert!(spec.contains(&format!("  - name: {target}\n")), "{spec}");
            let kernel = if target == "matmul" {
                "matmul_tiled"
            } else if target == "reduce" {
                "reduce_sum"
            } else {
                "vector_add"
            };
            assert!(spec.contains(&format!("    kernel: {kernel}\n")), "{spec}");
        }
    }
}

#[test]
fn init_refuses_to_overwrite_a_spec_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("cgp-gate.yaml");
    std::fs::write(&spec, "# mine\n").unwrap();
    let capture = root().join("examples/recordings/main/vector_add/n=1048576/0.csv");
    let out = bin()
        .current_dir(dir.path())
        .args(["init", "--from"])
        .arg(&capture)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--force"));
    assert_eq!(
        std::fs::read_to_string(&spec).unwrap(),
        "# mine\n",
        "left as it was"
    );
    let out = bin()
        .current_dir(dir.path())
        .args(["init", "--force", "--from"])
        .arg(&capture)
        .output()
        .unwrap();
    assert!(out.status.success());
    validate(&spec);
}

#[test]
fn init_takes_a_target_name_that_can_name_files() {
    let capture = root().join("examples/recordings/main/reduce/n=16777216/0.csv");
    let (dir, out) = {
        let dir = tempfile::tempdir().unwrap();
        let out = bin()
            .current_dir(dir.path())
            .args(["init", "--name", "sum-256", "--from"])
            .arg(&capture)
            .output()
            .unwrap();
        (dir, out)
    };
    assert!(out.status.success());
    let spec = std::fs::read_to_string(dir.path().join("cgp-gate.yaml")).unwrap();
    assert!(spec.contains("  - name: sum-256\n"), "{spec}");
    let out = bin()
        .current_dir(dir.path())
        .args(["init", "--force", "--name", "../x", "--from"])
        .arg(&capture)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be a target name"));
}

#[test]
fn init_without_a_program_or_a_capture_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin().current_dir(dir.path()).arg("init").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--from FILE"));
    assert!(!dir.path().join("cgp-gate.yaml").exists());
}

#[test]
fn init_runs_the_program_once_under_ncu_without_a_kernel_filter() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("fake");
    std::fs::create_dir(&fake).unwrap();
    std::fs::copy(
        root().join("examples/recordings/main/matmul/n=1024/0.csv"),
        fake.join("log"),
    )
    .unwrap();
    let out = bin()
        .current_dir(dir.path())
        .env("CGP_GATE_NCU", root().join("tests/fixtures/fake-ncu/ncu"))
        .env("FAKE_NCU_DIR", &fake)
        .env(crate::support::STAND_IN_GPU, crate::support::stand_in_gpu())
        .args(["init", "--", "./build/matmul", "--n", "1024"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let spec_path = dir.path().join("cgp-gate.yaml");
    validate(&spec_path);
    let spec = std::fs::read_to_string(&spec_path).unwrap();
    assert!(spec.contains("command: [./build/matmul, --n, \"{n}\"]"), "{spec}");
    assert!(spec.contains("      - { n: 1024 }\n"), "{spec}");
    assert!(spec.contains("    kernel: matmul_tiled\n"), "{spec}");
    // One profiling run (after `--version`): the program's argv last, every kernel, bounded.
    let log = std::fs::read_to_string(fake.join("argv.log")).unwrap();
    let runs: Vec<Vec<&str>> = log
        .split("\n\n")
        .filter(|r| !r.trim().is_empty())
        .map(|r| r.lines().collect())
        .collect();
    assert_eq!(runs.len(), 2, "{log}");
    assert_eq!(runs[0], ["--version"]);
    let run = &runs[1];
    assert_eq!(&run[run.len() - 3..], ["./build/matmul", "--n", "1024"]);
    assert!(!run.contains(&"--kernel-name"), "{run:?}");
    assert!(run.windows(2).any(|w| w == ["--launch-count", "200"]), "{run:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("void matmul_tiled<32>     3 launches    116.2 us  38 registers"),
        "{stdout}"
    );
}

#[test]
fn init_reports_a_failing_program_as_a_profiler_failure_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("fake");
    std::fs::create_dir(&fake).unwrap();
    std::fs::write(fake.join("exit"), "1").unwrap();
    std::fs::write(fake.join("stderr"), "bench: cannot open input\n").unwrap();
    let out = bin()
        .current_dir(dir.path())
        .env("CGP_GATE_NCU", root().join("tests/fixtures/fake-ncu/ncu"))
        .env("FAKE_NCU_DIR", &fake)
        .env(crate::support::STAND_IN_GPU, crate::support::stand_in_gpu())
        .args(["init", "--", "./bench"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bench: cannot open input"), "{stderr}");
    assert!(!dir.path().join("cgp-gate.yaml").exists());
}

/// `check` of the example slowdown (SYNTHETIC recordings) with the table at `columns`.
fn check_slowdown(columns: &str, extra: &[&str]) -> (i32, String) {
    let mut c = bin();
    c.current_dir(root())
        .env("COLUMNS", columns)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_OUTPUT")
        .args([
            "check",
            "--spec",
            "examples/cgp-gate.yaml",
            "--baselines",
            "examples/baselines",
            "--replay",
            "examples/recordings/pr-slowdown",
        ])
        .args(extra);
    let out = c.output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn the_check_table_fits_80_and_120_columns() {
    for columns in [80, 120] {
        let (code, table) = check_slowdown(&columns.to_string(), &["--color", "never"]);
        assert_eq!(code, 1);
        for line in table.lines() {
            assert!(
                line.chars().count() <= columns,
                "{} columns: {line}",
                line.chars().count()
            );
        }
        insta::assert_snapshot!(format!("check_table_{columns}"), table);
    }
}

/// `profile --replay` of the example main recording (SYNTHETIC) with the table at `columns`.
fn profile_main(columns: &str) -> String {
    let out = bin()
        .current_dir(root())
        .env("COLUMNS", columns)
        .args([
            "profile",
            "--spec",
            "examples/cgp-gate.yaml",
            "--replay",
            "examples/recordings/main",
            "--color",
            "never",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_profile_table_fits_80_and_120_columns() {
    for columns in [80, 120] {
        let table = profile_main(&columns.to_string());
        // The first line names the recording's path; the table below it must fit.
        for line in table.lines().skip(1) {
            assert!(
                line.chars().count() <= columns,
                "{} columns: {line}",
                line.chars().count()
            );
        }
        // The full metric names are in the legend.
        assert!(table.contains("time = gpu__time_duration.sum"), "{table}");
        insta::assert_snapshot!(format!("profile_table_{columns}"), table);
    }
    // A pipe without COLUMNS gets every column.
    let wide = profile_main("");
    assert!(
        wide.contains("min") && wide.contains("max") && !wide.contains("left out"),
        "{wide}"
    );
}

#[test]
fn verdicts_are_coloured_only_when_asked_off_a_terminal() {
    // `bin()` sets NO_COLOR; `--color always` still wins (it is asked for this run).
    let (_, plain) = check_slowdown("200", &[]);
    assert!(!plain.contains('\x1b'), "{plain}");
    let (_, coloured) = check_slowdown("200", &["--color", "always"]);
    assert!(
        coloured.contains("\x1b[1m\x1b[31mregression\x1b[0m"),
        "{coloured:?}"
    );
    assert!(coloured.contains("\x1b[32mpass\x1b[0m"), "{coloured:?}");
    // The same table once the escapes are removed.
    let stripped = regex::Regex::new("\x1b\\[[0-9;]*m")
        .unwrap()
        .replace_all(&coloured, "");
    assert_eq!(stripped, plain);
}

/// Every subcommand name, from the command layer itself.
fn subcommands() -> Vec<String> {
    let cmd = <cgp_gate::cli::Cli as clap::CommandFactory>::command();
    cmd.get_subcommands().map(|s| s.get_name().to_owned()).collect()
}

#[test]
fn completions_are_generated_for_every_shell_with_every_subcommand() {
    let marks = [
        ("bash", "complete -F _cgp__gate"),
        ("zsh", "#compdef cgp-gate"),
        ("fish", "complete -c cgp-gate"),
        (
            "powershell",
            "Register-ArgumentCompleter -Native -CommandName 'cgp-gate'",
        ),
        ("elvish", "set edit:completion:arg-completer[cgp-gate]"),
    ];
    let subs = subcommands();
    assert!(subs.iter().any(|s| s == "init") && subs.iter().any(|s| s == "completions"));
    for (shell, mark) in marks {
        let out = bin().args(["completions", shell]).output().unwrap();
        assert!(
            out.status.success(),
            "{shell}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains(mark), "{shell}: no `{mark}`");
        for s in &subs {
            assert!(script.contains(s.as_str()), "{shell}: no subcommand `{s}`");
        }
        assert!(script.contains("fail-on"), "{shell}: no `check --fail-on`");
    }
    let out = bin().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "an unknown shell is a usage error");
}

/// What bash completes for `words` (the last one being completed), with the generated script.
fn bash_complete(words: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("cgp-gate.bash");
    let out = bin().args(["completions", "bash"]).output().unwrap();
    std::fs::write(&script, out.stdout).unwrap();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let n = words.len();
    let program = format!(
        "source '{}'\nCOMP_WORDS=({})\nCOMP_CWORD={}\n_cgp__gate cgp-gate '{}' '{}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display(),
        quoted.join(" "),
        n - 1,
        words[n - 1],
        words[n - 2],
    );
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(program)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn bash_completes_subcommands_their_options_and_their_values() {
    assert_eq!(bash_complete(&["cgp-gate", "che"]), ["check"]);
    assert_eq!(
        bash_complete(&["cgp-gate", "check", "--fail-on", ""]),
        ["regression", "inconclusive"]
    );
    let shells = bash_complete(&["cgp-gate", "completions", ""]);
    for shell in ["bash", "elvish", "fish", "powershell", "zsh"] {
        assert!(shells.iter().any(|s| s == shell), "{shells:?}");
    }
    let init = bash_complete(&["cgp-gate", "init", "--"]);
    for flag in ["--from", "--output", "--force", "--name"] {
        assert!(init.iter().any(|f| f == flag), "{init:?}");
    }
    assert_eq!(bash_complete(&["cgp-gate", "baseline", "up"]), ["update"]);
}

#[test]
fn man_pages_come_from_the_command_definitions() {
    let out = bin().arg("man").output().unwrap();
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".TH cgp-gate 1"), "{page}");
    assert!(page.contains("CI performance\\-regression gate"), "{page}");
    for s in subcommands() {
        assert!(
            page.contains(&format!("cgp\\-gate\\-{}(1)", s.replace('-', "\\-"))),
            "no {s} in the main page"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let out = bin().arg("man").arg("--dir").arg(dir.path()).output().unwrap();
    assert!(out.status.success());
    for s in subcommands().into_iter().filter(|s| s != "help") {
        let path = dir.path().join(format!("cgp-gate-{s}.1"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("{} missing", path.display()));
        assert!(text.contains(&format!(".TH cgp-gate-{s} 1")), "{text}");
    }
    let update = std::fs::read_to_string(dir.path().join("cgp-gate-baseline-update.1")).unwrap();
    assert!(update.contains("\\fBcgp\\-gate baseline update\\fR"), "{update}");
    assert!(update.contains("\\-\\-from"), "{update}");
}

/// The `console` blocks of docs/getting-started.md, run in order in one directory (the steps
/// build on each other) on the synthetic recordings: each `$ cgp-gate ...` must print what the
/// page shows (stderr, then stdout, as a terminal shows them here), and each `$ echo $?` the
/// exit code. The spec the page shows is the spec init wrote.
#[test]
fn getting_started_shows_what_the_commands_print() {
    let doc = std::fs::read_to_string(root().join("docs/getting-started.md")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(root().join("examples/recordings"), dir.path().join("recordings")).unwrap();
    let mut blocks = Vec::new();
    let mut in_block: Option<(String, Vec<String>)> = None;
    for line in doc.lines() {
        match &mut in_block {
            None if line.starts_with("```") => {
                in_block = Some((line.trim_start_matches('`').to_owned(), Vec::new()));
            }
            None => {}
            Some(_) if line == "```" => blocks.push(in_block.take().unwrap()),
            Some((_, lines)) => lines.push(line.to_owned()),
        }
    }
    let mut last_code = None;
    let mut commands = 0;
    // Wall times of replayed runs depend on the machine.
    let times = regex::Regex::new(r" in [0-9]+(\.[0-9]+s|m [0-9]+s|h [0-9]+m)").unwrap();
    for (lang, lines) in &blocks {
        if lang == "yaml"
            && lines
                .first()
                .is_some_and(|l| l.contains("written by `cgp-gate init`"))
        {
            let written = std::fs::read_to_string(dir.path().join("cgp-gate.yaml")).unwrap();
            assert_eq!(
                written,
                lines.join("\n") + "\n",
                "the spec on the page is not what init wrote"
            );
            continue;
        }
        if lang != "console" {
            continue;
        }
        let mut i = 0;
        while i < lines.len() {
            let cmd = lines[i]
                .strip_prefix("$ ")
                .expect("a console block starts with a command");
            let mut expected = Vec::new();
            i += 1;
            while i < lines.len() && !lines[i].starts_with("$ ") {
                expected.push(lines[i].as_str());
                i += 1;
            }
            if cmd == "echo $?" {
                assert_eq!(
                    Some(expected.join("")),
                    last_code.map(|c: i32| c.to_string()),
                    "exit code"
                );
                continue;
            }
            let args: Vec<&str> = cmd.strip_prefix("cgp-gate ").expect(cmd).split(' ').collect();
            let out = bin()
                .current_dir(dir.path())
                .env("COLUMNS", "100")
                .env_remove("GITHUB_ACTIONS")
                .args(&args)
                .output()
                .unwrap();
            last_code = out.status.code();
            let shown =
                String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
            let redact = |t: &str| times.replace_all(t.trim_end(), " in <time>").into_owned();
            assert_eq!(
                redact(&shown),
                redact(&expected.join("\n")),
                "`{cmd}` printed something else"
            );
            commands += 1;
        }
    }
    assert!(commands >= 5, "{commands} commands checked");
}

/// `check` of the example slowdown (SYNTHETIC recordings), stderr only, wall times redacted.
fn check_progress(extra: &[&str]) -> String {
    let out = bin()
        .current_dir(root())
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_OUTPUT")
        .args([
            "check",
            "--spec",
            "examples/cgp-gate.yaml",
            "--baselines",
            "examples/baselines",
            "--replay",
            "examples/recordings/pr-slowdown",
        ])
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let times = regex::Regex::new(r"[0-9]+(\.[0-9]+s|m [0-9]+s|h [0-9]+m)").unwrap();
    times
        .replace_all(&String::from_utf8_lossy(&out.stderr), "<time>")
        .into_owned()
}

#[test]
fn off_a_terminal_progress_is_a_line_per_finished_target_and_size() {
    insta::assert_snapshot!("check_progress_lines", check_progress(&[]));
}

#[test]
fn verbose_progress_adds_a_line_per_run_and_quiet_prints_none() {
    insta::assert_snapshot!("check_progress_verbose", check_progress(&["-v"]));
    assert_eq!(check_progress(&["--quiet"]), "");
}

/// Run `cgp-gate ARGS` on a pseudo-terminal (util-linux `script`), as a person at a terminal
/// does; returns what the terminal received (stderr and stdout).
fn on_a_terminal(args: &str, env: &[(&str, &str)]) -> Option<String> {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var_os("CI").is_none(),
            "`script` (util-linux) is missing: the terminal behaviour was not tested"
        );
        eprintln!("\n!!! SKIPPED: `script` (util-linux) is not installed; no pseudo-terminal test !!!\n");
        return None;
    }
    let bin = assert_cmd::cargo::cargo_bin("cgp-gate");
    let mut c = std::process::Command::new("script");
    c.current_dir(root())
        .env_remove("NO_COLOR")
        .env_remove("COLUMNS")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("CLICOLOR_FORCE")
        .env("TERM", "xterm")
        .args(["-qec", &format!("{} {args}", bin.display()), "/dev/null"]);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

const SLOWDOWN: &str = "check --spec examples/cgp-gate.yaml --baselines examples/baselines --replay examples/recordings/pr-slowdown";

#[test]
fn on_a_terminal_a_bar_with_an_eta_and_coloured_verdicts() {
    let Some(shown) = on_a_terminal(SLOWDOWN, &[]) else {
        return;
    };
    assert!(
        shown.contains("/25 runs  ETA "),
        "no bar over the 25 planned runs:\n{shown}"
    );
    assert!(
        shown.contains("matmul[n=1024] rep "),
        "the bar names the target and size:\n{shown}"
    );
    // matmul[n=1024] was re-measured (`check_cli` checks `remeasured` in the JSON; the console
    // shows each reason's first clause only). On a terminal the "re-measuring" status is the
    // bar's prefix, cleared with the bar (whether a replay this fast gets a redraw that shows it
    // is up to indicatif's rate limit; `progress::tests` checks the prefix): it never stays on
    // the screen as a line above the table.
    assert!(
        shown.contains("reason matmul[n=1024] time (regression): +"),
        "{shown}"
    );
    assert!(
        !shown.contains("doubtful size(s)\r") && !shown.contains("doubtful size(s)\n"),
        "the re-measuring status stayed as a line on a terminal:\n{shown}"
    );
    assert!(
        shown.contains("\x1b[1m\x1b[31mregression\x1b[0m"),
        "verdicts are coloured:\n{shown}"
    );
    assert!(
        !shown.contains("matmul[n=1024]: 5 runs in"),
        "no log lines on a terminal:\n{shown}"
    );

    let Some(plain) = on_a_terminal(SLOWDOWN, &[("NO_COLOR", "1")]) else {
        return;
    };
    assert!(
        !plain.contains("\x1b[31m"),
        "NO_COLOR: no colour on a terminal:\n{plain}"
    );
    let Some(quiet) = on_a_terminal(&format!("{SLOWDOWN} --quiet"), &[]) else {
        return;
    };
    assert!(!quiet.contains("runs  ETA"), "--quiet: no bar:\n{quiet}");
    assert!(quiet.contains("regression"), "{quiet}");
}

#[test]
fn the_first_estimate_comes_from_the_last_results_file() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("results.json");
    let run = || {
        bin()
            .current_dir(root())
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env_remove("GITHUB_OUTPUT")
            .args([
                "check",
                "--spec",
                "examples/cgp-gate.yaml",
                "--baselines",
                "examples/baselines",
                "--replay",
                "examples/recordings/pr-same",
                "--json",
            ])
            .arg(&json)
            .output()
            .unwrap()
    };
    let first = String::from_utf8_lossy(&run().stderr).into_owned();
    assert!(
        first.starts_with("profiling: 25 runs over 5 sizes of 3 targets\n"),
        "no earlier results, no estimate:\n{first}"
    );
    // A previous run that took 35 s in all: the plan is the same, so the estimate is 35 s.
    let mut results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    results["cost_seconds"] = serde_json::json!({"vector_add": 10.0, "matmul": 20.0, "reduce": 5.0});
    std::fs::write(&json, serde_json::to_string(&results).unwrap()).unwrap();
    let second = String::from_utf8_lossy(&run().stderr).into_owned();
    assert!(
        second.starts_with("profiling: 25 runs over 5 sizes of 3 targets, about 35.0s\n"),
        "{second}"
    );
}

#[test]
fn on_a_terminal_the_note_after_the_bar_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("fake");
    std::fs::create_dir(&fake).unwrap();
    std::fs::copy(
        root().join("examples/recordings/main/vector_add/n=1048576/0.csv"),
        fake.join("log"),
    )
    .unwrap();
    let spec = dir.path().join("cgp-gate.yaml");
    std::fs::write(
        &spec,
        "version: 1\ntargets:\n  - name: vector_add\n    command: [./app, --n, \"{n}\"]\n    kernel: vector_add\n    repetitions: 3\n    sizes: [{n: 1048576}]\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n",
    )
    .unwrap();
    let ncu = root().join("tests/fixtures/fake-ncu/ncu");
    let args = format!(
        "profile --spec {} --record {}",
        spec.display(),
        dir.path().join("rec").display()
    );
    let gpu = crate::support::stand_in_gpu();
    let env = [
        ("CGP_GATE_NCU", ncu.to_str().unwrap()),
        ("FAKE_NCU_DIR", fake.to_str().unwrap()),
        (crate::support::STAND_IN_GPU, gpu.to_str().unwrap()),
    ];
    let Some(shown) = on_a_terminal(&args, &env) else {
        return;
    };
    assert!(shown.contains("/3 runs  ETA "), "{shown}");
    assert!(shown.contains("recorded raw ncu output; manifest: "), "{shown}");
}

/// `init` is the first command in the help; `--color`, `--quiet` and `--verbose` are on the
/// commands that profile or colour a verdict table, and nowhere else (issue 24).
#[test]
fn init_comes_first_and_ui_flags_only_where_they_act() {
    let help = String::from_utf8(bin().arg("--help").output().unwrap().stdout).unwrap();
    let first = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .nth(1)
        .unwrap();
    assert!(first.trim_start().starts_with("init "), "{help}");
    assert!(!help.contains("--color") && !help.contains("--verbose"), "{help}");
    let help_of = |cmd: &[&str]| {
        let mut c = bin();
        c.args(cmd).arg("--help");
        String::from_utf8(c.output().unwrap().stdout).unwrap()
    };
    for cmd in [
        &["check"][..],
        &["profile"],
        &["ab"],
        &["calibrate"],
        &["baseline", "update"],
    ] {
        let h = help_of(cmd);
        assert!(
            h.contains("--color") && h.contains("--verbose") && h.contains("--quiet"),
            "{cmd:?}: {h}"
        );
    }
    for cmd in [&["report"][..], &["merge"]] {
        let h = help_of(cmd);
        assert!(h.contains("--color") && !h.contains("--verbose"), "{cmd:?}: {h}");
    }
    for cmd in [
        &["validate"][..],
        &["init"],
        &["parse"],
        &["schema"],
        &["env"],
        &["breakdown"],
        &["changes"],
        &["baseline", "show"],
    ] {
        let h = help_of(cmd);
        assert!(!h.contains("--color") && !h.contains("--verbose"), "{cmd:?}: {h}");
    }
    // A flag where it does nothing is refused, not silently ignored.
    let out = bin().args(["validate", "-v"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
