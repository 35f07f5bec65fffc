//! Item 5: one sanitiser for every outside string: API error bodies redacted and bounded, URL
//! passwords never printed, spec strings, manifest and fingerprint fields, kernel names and the
//! action's inputs kept on one line with no workflow command or terminal escape.

use super::*;

fn assert_no_command_or_escape(out: &str) {
    for l in out.lines() {
        assert!(
            !l.trim_start().starts_with("::add-mask") && !l.trim_start().starts_with("::stop-commands"),
            "a workflow command line: {l:?}\n{out}"
        );
    }
    assert!(!out.contains('\u{1b}'), "a raw ESC in:\n{out}");
    assert!(!out.contains('\u{202e}'), "a raw U+202E in:\n{out}");
}

/// The results of a real `check` (badlaunch against the H100 baselines: a regression).
fn h100_results(dir: &Path) -> PathBuf {
    let results = dir.join("r.json");
    let mut c = bin();
    c.args(strs(&h100_check(
        "badlaunch",
        &["--json", results.to_str().unwrap()],
    )));
    assert_eq!(run(c).0, 1);
    results
}

#[test]
fn github_api_error_bodies_are_redacted_and_bounded_in_errors_and_warnings() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    const TOKEN: &str = "ghs_s3cr3tT0kenValue1234567890";
    let dir = tempfile::tempdir().unwrap();
    let results = h100_results(dir.path());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    for (status, extra) in [(422_u16, 0_usize), (403, 0), (422, 5_000_000)] {
        let server = rt.block_on(MockServer::start());
        // A proxy that echoes the request's Authorization header, then a workflow command, then
        // (in the last case) 5 MB more.
        let message = format!(
            "Validation Failed; request headers: Authorization: token {TOKEN}\n::add-mask::x\u{1b}[31m{}",
            "y".repeat(extra)
        );
        rt.block_on(
            Mock::given(method("GET"))
                .and(path("/repos/acme/kernels/issues/42/comments"))
                .respond_with(ResponseTemplate::new(status).set_body_json(serde_json::json!({
                    "message": message,
                    "documentation_url": "https://docs.github.com/rest"
                })))
                .mount(&server),
        );
        let mut c = bin();
        c.args([
            "report",
            "--from",
            results.to_str().unwrap(),
            "--github-comment",
            "--repo",
            "acme/kernels",
            "--pr",
            "42",
        ])
        .env("GITHUB_API_URL", server.uri())
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_ACTIONS", "true")
        .env("CGP_GATE_RETRY_DELAYS_MS", "0,0");
        let (code, out) = run(c);
        if status == 403 {
            assert_eq!(code, 0, "a 403 is a warning: {out}");
            assert!(out.contains("::warning title=cgp-gate comment::"), "{out}");
        } else {
            assert_eq!(code, 3, "{out}");
        }
        assert!(
            out.contains("Validation Failed"),
            "the message is still there: {out}"
        );
        assert!(
            !out.contains(TOKEN) && !out.contains("s3cr3t"),
            "the token leaked:\n{out}"
        );
        assert!(out.len() < 8_000, "{} bytes of output", out.len());
        assert_no_command_or_escape(&out);
    }
}

#[test]
fn a_password_in_the_gitlab_api_url_is_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let results = h100_results(dir.path());
    let mut c = bin();
    c.args([
        "gitlab-note",
        "--from",
        results.to_str().unwrap(),
        "--api-url",
        "http://user:PA55w0rd@127.0.0.1:9/api/v4",
        "--project",
        "1",
        "--mr",
        "2",
    ])
    .env("GITLAB_TOKEN", "glpat-abcdefghijklmnopqrst")
    .env("CGP_GATE_RETRY_DELAYS_MS", "0,0");
    let (code, out) = run(c);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("http://user:***@127.0.0.1:9/api/v4"), "{out}");
    assert!(!out.contains("PA55w0rd") && !out.contains("glpat-abc"), "{out}");
}

#[test]
fn a_newline_in_any_spec_string_stays_on_the_error_line() {
    let base = "version: 1\ntargets:\n  - name: NAME\n    command: [./b, \"{n}\"]\n    kernel: KERNEL\n    timeout: TIMEOUT\n    sizes: [{n: SIZE}]\n    metrics:\n      METRIC: THRESH\n";
    let fill = |which: &str, bad: &str| {
        let mut s = base.to_owned();
        for (k, v) in [
            ("NAME", "t"),
            ("KERNEL", "k"),
            ("TIMEOUT", "5s"),
            ("SIZE", "1"),
            ("METRIC", "gpu__time_duration.sum"),
            ("THRESH", "\"3%\""),
        ] {
            let v = if k == which {
                serde_json::to_string(bad).unwrap()
            } else {
                v.to_owned()
            };
            s = s.replace(k, &v);
        }
        s
    };
    let evil = "x\n::add-mask::secret\r\u{1b}[2J\u{202e}";
    let cases = [
        ("NAME", format!("a{evil}")),
        ("KERNEL", format!("regex:({evil}")),
        ("TIMEOUT", format!("5{evil}")),
        ("SIZE", format!("1{evil}")),
        ("METRIC", format!("gpu__x{evil}")),
        ("THRESH", format!("3%{evil}")),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (which, bad) in cases {
        let p = dir.path().join("s.yaml");
        std::fs::write(&p, fill(which, &bad)).unwrap();
        let mut c = bin();
        c.args(["validate", "--spec", p.to_str().unwrap()]);
        let (code, out) = run(c);
        assert_eq!(code, 2, "{which}: {out}");
        let first = out.lines().next().unwrap();
        assert!(
            first.contains("\\n::add-mask::secret\\r\\u{1b}[2J\\u{202e}"),
            "{which}: {out}"
        );
        assert_no_command_or_escape(&out);
    }
    // A key with a newline.
    let p = dir.path().join("s.yaml");
    std::fs::write(
        &p,
        fill("", "").replace("    timeout:", "    \"tim\\n::add-mask::k\": 1\n    timeout:"),
    )
    .unwrap();
    let mut c = bin();
    c.args(["validate", "--spec", p.to_str().unwrap()]);
    let (code, out) = run(c);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("tim\\n::add-mask::k"), "{out}");
    assert_no_command_or_escape(&out);
}

#[test]
fn a_manifest_gpu_name_and_a_baseline_fingerprint_field_stay_on_one_line() {
    let evil = "\n::add-mask::x\u{1b}[31m";
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec");
    copy_dir(&root().join(H100).join("badlaunch"), &rec);
    let m = rec.join("manifest.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
    let name = v["fingerprint"]["gpu_name"].as_str().unwrap().to_owned() + evil;
    v["fingerprint"]["gpu_name"] = name.into();
    std::fs::write(&m, v.to_string()).unwrap();
    let spec = format!("{H100}/check.yaml");
    let mut c = bin();
    c.args([
        "check",
        "--spec",
        &spec,
        "--baselines",
        "examples/baselines-h100",
        "--replay",
        rec.to_str().unwrap(),
    ]);
    let (code, out) = run(c);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("HBM3\\n::add-mask::x\\u{1b}[31m"), "{out}");
    assert_no_command_or_escape(&out);

    let bl = dir.path().join("bl");
    copy_dir(&root().join("examples/baselines-h100"), &bl);
    let f = bl.join("nvidia-h100-80gb-hbm3/matmul.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    let drv = v["fingerprint"]["driver_version"].as_str().unwrap().to_owned() + evil;
    v["fingerprint"]["driver_version"] = drv.into();
    std::fs::write(&f, v.to_string()).unwrap();
    let mut c = bin();
    c.args([
        "check",
        "--spec",
        &spec,
        "--baselines",
        bl.to_str().unwrap(),
        "--replay",
        &format!("{H100}/badlaunch"),
    ]);
    let (code, out) = run(c);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("driver_version: baseline `580.159.04\\n::add-mask::x\\u{1b}[31m`"),
        "{out}"
    );
    assert_no_command_or_escape(&out);
}

#[test]
fn baseline_show_escapes_kernel_names_with_newlines_and_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let bl = dir.path().join("bl");
    copy_dir(&root().join("examples/baselines-h100"), &bl);
    let f = bl.join("nvidia-h100-80gb-hbm3/matmul.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    v["entries"][0]["kernel"] = "matmul\n::add-mask::x\u{1b}[2J\u{202e}".into();
    std::fs::write(&f, v.to_string()).unwrap();
    let mut c = bin();
    c.args(["baseline", "show", "--baselines", bl.to_str().unwrap()]);
    let (code, out) = run(c);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("matmul\\n::add-mask::x\\u{1b}[2J\\u{202e}"), "{out}");
    assert_no_command_or_escape(&out);
}

#[test]
fn the_actions_die_prints_inputs_on_one_line() {
    let out = StdCommand::new("bash")
        .arg(root().join("scripts/action.sh"))
        .arg("run")
        .env("GITHUB_ACTIONS", "true")
        .env("INPUT_PATH", "/bin/true")
        .env("INPUT_COMMENT", "x\n::add-mask::y\r\u{1b}[31m\u{202e}%z")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_no_command_or_escape(&text);
    assert!(text.contains("::error title=cgp-gate action::input 'comment' must be true or false, got 'x\\n::add-mask::y\\r\\e[31m?%25z'"), "{text}");
    assert_eq!(text.lines().count(), 2, "{text}");
}
