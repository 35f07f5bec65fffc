//! The command line's conveniences, end to end through the binary: `init` (in [`init`]: on every
//! real ncu capture of tests/fixtures/ncu-wild and on the example recordings, each written spec
//! checked by `validate`, and `init -- PROGRAM` against the stand-in ncu), the tables at 80 and
//! 120 columns, colour, shell completions and man pages, the getting-started page, progress off
//! and on a terminal, and the UI flags only where they act.

use std::path::Path;

use crate::support::root;
use assert_cmd::Command;

mod init;

fn bin() -> Command {
    let mut c = crate::support::bin();
    c.env_remove("CGP_GATE_NCU").env("NO_COLOR", "1");
    c
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
