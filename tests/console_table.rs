//! The check's console table in a real terminal (tmux) of 80, 120 and 200 columns, on REAL H100
//! recordings: the planted regressions (tests/fixtures/h100-planted) and a PyTorch workload with
//! long library kernel names (tests/fixtures/h100-torch). Nothing wraps past the edge, the
//! baseline and the candidate stay together, kernel names lose their return type and namespaces
//! before their middle, units are in the metric cell rather than in every value, the change agrees
//! with the medians shown, p is shown only where a row needed it, and every inconclusive or failed
//! row's reason is on a line of its own under the table.

use crate::support;

use crate::support::root;
use std::process::Command;
use std::time::{Duration, Instant};

/// `check` on a fixture, with its arguments.
fn check_args(fixture: &str) -> Vec<String> {
    let fx = root().join("tests/fixtures").join(fixture);
    let (rec, spec) = if fixture == "h100-torch" {
        (fx.join("rec"), fx.join("spec.yaml"))
    } else {
        (fx.join("extra3"), fx.join("check.yaml"))
    };
    vec![
        "check".into(),
        "--no-skip".into(),
        "--quiet".into(),
        "--color".into(),
        "never".into(),
        "--no-github-actions".into(),
        "--replay".into(),
        rec.display().to_string(),
        "--spec".into(),
        spec.display().to_string(),
        "--baselines".into(),
        fx.join("baselines").display().to_string(),
    ]
}

/// What a terminal of `width` columns shows after `cgp-gate ARGS` ran in it, as its lines; and
/// whether any line was longer than the terminal (tmux wrapped it: joining wrapped lines, `-J`,
/// gives fewer lines). `None` when tmux is missing.
fn in_terminal(test: &str, width: usize, args: &[String]) -> Option<(Vec<String>, bool)> {
    if Command::new("tmux").arg("-V").output().is_err() {
        support::skip(test, "tmux is not installed (.ci/setup installs it)");
        return None;
    }
    let socket = format!("cgp-gate-test-{}-{width}-{test}", std::process::id());
    // The options are in the server's configuration, read before the program starts: set after
    // `new-session`, a program that finished first (a replay, on a loaded machine) took its pane
    // with it, and the test waited for a pane that was gone.
    let conf = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        conf.path(),
        "set -g remain-on-exit on\nset -g history-limit 5000\n",
    )
    .unwrap();
    let tmux = |a: &[&str]| {
        Command::new("tmux")
            .arg("-L")
            .arg(&socket)
            .arg("-f")
            .arg(conf.path())
            .args(a)
            .env_remove("TMUX")
            .output()
            .expect("run tmux")
    };
    // The program sizes its table from the terminal it writes to: no COLUMNS.
    let mut cmd = vec![
        "env".to_owned(),
        "-u".into(),
        "COLUMNS".into(),
        "-u".into(),
        "GITHUB_ACTIONS".into(),
        env!("CARGO_BIN_EXE_cgp-gate").to_owned(),
    ];
    cmd.extend(args.iter().cloned());
    let w = width.to_string();
    let mut new = vec!["new-session", "-d", "-x", &w, "-y", "50", "-s", "t"];
    new.extend(cmd.iter().map(String::as_str));
    let out = tmux(&new);
    assert!(out.status.success(), "{out:?}");
    let start = Instant::now();
    loop {
        let dead = tmux(&["list-panes", "-t", "t", "-F", "#{pane_dead}"]);
        if String::from_utf8_lossy(&dead.stdout).trim() == "1" {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "cgp-gate did not finish in tmux"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let plain = tmux(&["capture-pane", "-p", "-t", "t", "-S", "-5000"]);
    let joined = tmux(&["capture-pane", "-p", "-J", "-t", "t", "-S", "-5000"]);
    tmux(&["kill-server"]);
    let lines = |o: &std::process::Output| -> Vec<String> {
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        let mut v: Vec<String> = text.lines().map(|l| l.trim_end().to_owned()).collect();
        while v
            .last()
            .is_some_and(|l| l.is_empty() || l.starts_with("Pane is dead"))
        {
            v.pop();
        }
        v
    };
    let (plain, joined) = (lines(&plain), lines(&joined));
    Some((plain.clone(), joined.len() < plain.len()))
}

fn header(lines: &[String]) -> &str {
    lines
        .iter()
        .find(|l| l.starts_with("verdict "))
        .unwrap_or_else(|| panic!("no table header in:\n{}", lines.join("\n")))
}

#[test]
fn the_planted_check_fits_80_120_and_200_columns() {
    for width in [80, 120, 200] {
        let Some((lines, wrapped)) = in_terminal(
            "the_planted_check_fits_80_120_and_200_columns",
            width,
            &check_args("h100-planted"),
        ) else {
            return;
        };
        let text = lines.join("\n");
        assert!(!wrapped, "a line is wider than {width} columns:\n{text}");
        assert!(lines.iter().all(|l| l.chars().count() <= width), "{text}");
        let head = header(&lines);
        // The change the verdict used, at every width; the medians, labelled as context, where
        // there is room for them.
        assert!(head.contains("change"), "{width}: {head}");
        assert!(!head.contains("Δ median") && !head.contains("baseline"), "{head}");
        // Units once, with the metric; bare numbers in the value columns.
        let row = lines
            .iter()
            .find(|l| l.starts_with("regression") && l.contains("matmul") && l.contains("time (us)"))
            .unwrap_or_else(|| panic!("{width}: no matmul time row:\n{text}"));
        // The run-level shift the verdict used (not the +4.0% of the two medians), at 80 columns too.
        assert!(row.contains("+3.98%") && !row.contains(" us "), "{row}");
        // The interval of every changed row at 80 columns too (issue 46): the medians and, at 80,
        // the kernel make room for it.
        assert!(row.contains("[+3.42%, +4.54%]"), "{width}: {row}");
        if width >= 120 {
            assert!(row.contains("matmul_tiled<32>"), "{width}: {row}");
        } else {
            assert!(text.contains("left out to fit 80 columns: kernel"), "{text}");
        }
        // The interval the verdict used (at its own level: the rows' levels differ after the
        // looks and Holm) from 120 columns; the medians, context, where there is room for them.
        if width >= 120 {
            assert!(row.contains("[+3.42%, +4.54%] (99.8% CI)"), "{row}");
        }
        if width >= 200 {
            assert!(head.contains("median base"), "{width}: {head}");
            assert!(row.contains("246.9 → 256.8"), "{row}");
        }
        // Each inconclusive or failed row's reason on one line of its own under the table, not
        // a paragraph: the full sentence is in the other reports.
        // An inconclusive row says beside its verdict what the run could detect (issue 57).
        for (target, verdict) in [
            ("reduce[n=16777216]", "inconclusive: this run could"),
            ("vector_add[n=16777216]", "regression): +"),
        ] {
            assert!(
                lines
                    .iter()
                    .any(|l| l.starts_with(&format!("reason {target} time ({verdict}"))),
                "{width}: no reason line for {target}:\n{text}"
            );
        }
        for (k, l) in lines.iter().enumerate() {
            if l.starts_with("reason ") {
                let next = lines.get(k + 1).map_or("", String::as_str);
                assert!(!next.starts_with("  "), "{width}: a reason wraps:\n{text}");
            }
        }
        let under = lines.iter().skip_while(|l| !l.starts_with("reason ")).count();
        assert!(under <= 24, "{width}: {under} lines under the table:\n{text}");
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("reason matmul[n=1024] time (regression): +3.98%")),
            "{text}"
        );
        if width >= 120 {
            assert!(row.contains("void matmul_tiled<32>"), "{width}: {row}");
        }
        if width == 200 {
            // Every column, p among them: the changed rows needed a test; a pass row shows none.
            // With room for it, the header names the column as its legend does (issue 59).
            assert!(head.contains(" CI") && head.ends_with(" p (adj.)"), "{head}");
            assert!(text.contains("\np (adj.): the p-value"), "{text}");
            let pass = lines
                .iter()
                .find(|l| l.starts_with("pass ") && l.contains("flop/s"))
                .unwrap();
            assert!(!pass.contains("1.000"), "{pass}");
        }
    }
}

#[test]
fn library_kernel_names_lose_return_type_and_namespace_first() {
    for width in [80, 120, 200] {
        let Some((lines, wrapped)) = in_terminal(
            "library_kernel_names_lose_return_type_and_namespace_first",
            width,
            &check_args("h100-torch"),
        ) else {
            return;
        };
        let text = lines.join("\n");
        assert!(!wrapped, "a line is wider than {width} columns:\n{text}");
        let head = header(&lines);
        assert!(head.contains("change"), "{width}: {head}");
        if width >= 120 {
            assert!(head.contains("median base"), "{width}: {head}");
        }
        // Every row passed: no p column, and no legend of one.
        assert!(!head.ends_with(" p") && !head.contains(" p "), "{width}: {head}");
        assert!(
            !head.contains("p (adj.)") && !text.contains("p (adj.):"),
            "{width}: {text}"
        );
        assert!(
            text.contains("regs/thread") && !text.contains("register/thread"),
            "{text}"
        );
        let layer = lines
            .iter()
            .find(|l| l.contains("layernorm") && l.contains("time (us)"))
            .unwrap();
        let gemm = lines
            .iter()
            .find(|l| l.contains("n=4096") && l.contains("time (us)"))
            .unwrap();
        match width {
            200 => {
                assert!(
                    layer.contains("void unnamed>::vectorized_layer_norm_kernel<Half, float, 0>"),
                    "{layer}"
                );
                assert!(
                    gemm.contains("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"),
                    "{gemm}"
                );
            }
            120 => {
                // Not `void unnamed>::vectoriz…`: the start of the function's name and the end of
                // its template arguments.
                assert!(!layer.contains("void") && !layer.contains("unnamed>"), "{layer}");
                assert!(
                    layer.contains("vectorized_") && layer.contains("float, 0>"),
                    "{layer}"
                );
                // cuBLAS names keep their tile shape, what tells them apart.
                assert!(gemm.contains("nvjet_sm90_tst_256x128_64x4_1x2"), "{gemm}");
            }
            _ => {
                // At 80 the kernel is still there, its tile shape with it.
                assert!(gemm.contains("nvjet_sm90_tst_256x128"), "{gemm}");
                assert!(layer.contains("vectorized_"), "{layer}");
            }
        }
    }
}

#[test]
fn short_kernel_drops_the_least_useful_parts_first() {
    use cgp_report::report::console::short_kernel;
    let name = "void unnamed>::vectorized_layer_norm_kernel<Half, float, 0>";
    assert_eq!(short_kernel(name, 80), name);
    assert_eq!(
        short_kernel(name, 50),
        "vectorized_layer_norm_kernel<Half, float, 0>"
    );
    assert_eq!(short_kernel(name, 21), "vectorized… float, 0>");
    assert_eq!(
        short_kernel(
            "void at::native::(anonymous namespace)::softmax<float>(float const*, int)",
            20
        ),
        "softmax<float>"
    );
    let cutlass =
        "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_128x256_64x3_nn_align2>(T1::Params)";
    let s = short_kernel(cutlass, 30);
    assert_eq!(s.chars().count(), 30, "{s}");
    assert!(
        s.starts_with("Kernel2<cutlass…") && s.ends_with("nn_align2>"),
        "{s}"
    );
}

#[test]
fn notes_about_missing_rows_fit_the_terminal_too() {
    // The kit's own spec as it ran on the H100: `regex:^matmul_tiled` selects nothing now that a
    // filter matches the demangled name (`void matmul_tiled<32>(...)`), so matmul's baseline rows
    // are missing, and the notes about them (the kernel that disappeared, the kernel switch, the
    // rows not measured) are long sentences under the table.
    let fx = root().join("tests/fixtures/h100-planted");
    let dir = tempfile::tempdir().unwrap();
    let spec = std::fs::read_to_string(fx.join("check.yaml"))
        .unwrap()
        .replace("kernel: regex:matmul_tiled\n", "kernel: regex:^matmul_tiled\n");
    assert!(spec.contains("regex:^matmul_tiled"));
    let spec_path = dir.path().join("check.yaml");
    std::fs::write(&spec_path, spec).unwrap();
    let mut args = check_args("h100-planted");
    let i = args.iter().position(|a| a == "--spec").unwrap();
    args[i + 1] = spec_path.display().to_string();
    for width in [80, 120] {
        let Some((lines, wrapped)) =
            in_terminal("notes_about_missing_rows_fit_the_terminal_too", width, &args)
        else {
            return;
        };
        let text = lines.join("\n");
        assert!(!wrapped, "a line is wider than {width} columns:\n{text}");
        assert!(lines.iter().all(|l| l.chars().count() <= width), "{text}");
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("missing ") && l.contains("matmul")),
            "{text}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("kernels that disappeared (in the baseline, not measured now):")),
            "{text}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("4 baseline row(s) this run should have measured were not")),
            "{text}"
        );
        // The kernel that ran is the baseline's: the note blames the filter, not a switch.
        let unwrapped = text.replace("\n  ", " ");
        assert!(
            unwrapped.contains(
                "matmul[n=1024]: `void matmul_tiled<32>` (not selected by its `kernel:` filter) ran, \
                 the baseline's `void matmul_tiled<32>` among them: not a kernel switch"
            ),
            "{text}"
        );
    }
}

/// A missing row that fails the gate gets its reason line under the table, as every other row
/// that fails does (decide::row_gate); allowed, it gets none.
#[test]
fn a_missing_row_that_fails_the_gate_gets_its_reason_line() {
    use cgp_outcome::outcome::results::RowVerdict;
    let mut r =
        cgp_outcome::outcome::results::read(&root().join("tests/fixtures/results/mixed.json")).unwrap();
    let i = r
        .rows
        .iter()
        .position(|x| x.verdict() == RowVerdict::Missing)
        .unwrap();
    let line = format!("reason {}[{}] ", r.rows[i].key.target, r.rows[i].key.size);
    let has_line = |out: &str| {
        out.lines()
            .any(|l| l.starts_with(&line) && l.contains("(missing)"))
    };
    let allowed = cgp_report::report::console::results_table(&r);
    assert!(!has_line(&allowed), "{allowed}");
    r.rows[i].outcome = cgp_outcome::outcome::results::Outcome::Missing(
        cgp_outcome::outcome::results::Missing::failing(Default::default()),
    );
    let failing = cgp_report::report::console::results_table(&r);
    assert!(has_line(&failing), "{failing}");
}
