//! `cgp-gate parse` on the transcribed ncu output shapes in tests/fixtures/ncu (see its README).

use std::path::PathBuf;

use serde_json::Value;

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ncu")
        .join(rel)
}

/// Run `parse --json` and return the JSON (asserting exit 0).
fn parse_json(rel: &str) -> Value {
    let out = crate::support::bin()
        .args(["parse", "--json"])
        .arg(fixture(rel))
        .output()
        .expect("run cgp-gate");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{rel}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

/// Run `parse` on a file expected to fail; return stderr (asserting exit 2).
fn parse_error(path: &std::path::Path) -> String {
    let out = crate::support::bin()
        .arg("parse")
        .arg(path)
        .output()
        .expect("run cgp-gate");
    assert_eq!(out.status.code(), Some(2), "{}", path.display());
    assert!(out.stdout.is_empty());
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn metric<'a>(launch: &'a Value, name: &str) -> &'a Value {
    &launch["metrics"][name]
}

fn value(launch: &Value, name: &str) -> f64 {
    metric(launch, name)["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("{name}: {launch}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn d1_details_after_application_output() {
    let j = parse_json("d1/details.log");
    assert_eq!(j["shape"], "details");
    let l = j["launches"].as_array().unwrap();
    assert_eq!(l.len(), 2);
    assert_eq!(l[0]["id"], 0);
    assert_eq!(
        l[0]["kernel"],
        "cuda_compute_step_factor(int,float*,float*,float*)"
    );
    assert_eq!(metric(&l[0], "Duration")["unit"], "ns");
    assert!(close(value(&l[0], "Duration"), 8992.0));
    assert!(close(value(&l[1], "Duration"), 41_920.0), "usecond scaled");
    assert!(close(value(&l[0], "Elapsed Cycles"), 11_466.0));
    assert!(close(value(&l[0], "SM Frequency"), 1.27e9), "cycle/nsecond -> Hz");
    assert_eq!(metric(&l[0], "SM Frequency")["unit"], "Hz");
    assert!(
        l[1]["metrics"].get("Registers Per Thread").is_none(),
        "n/a is absent"
    );
    assert_eq!(l[0]["attributes"]["Kernel Time"], "2020-May-29 12:02:46");
    assert_eq!(l[0]["attributes"]["Process ID"], "28439");
}

#[test]
fn d2_nvtx_columns_are_attributes_and_rule_rows_skipped() {
    let j = parse_json("d2/details_nvtx.csv");
    let l = j["launches"].as_array().unwrap();
    assert_eq!(l.len(), 2);
    assert_eq!(l[0]["kernel"], "volta_sgemm_128x64_nn");
    assert_eq!(
        l[0]["attributes"]["thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"],
        "<default domain>:start:none:none:none:none:none:none:none"
    );
    assert!(
        close(value(&l[0], "DRAM Frequency"), 877.12e6),
        "cycle/usecond -> Hz"
    );
    assert!(close(value(&l[0], "Shared Memory Configuration Size"), 65_540.0));
    assert_eq!(l[0]["metrics"].as_object().unwrap().len(), 5);
    assert!(l[0]["attributes"].get("Rule Name").is_none());
    assert!(close(value(&l[1], "Duration"), 4384.0));
}

#[test]
fn d3_trailing_commas_strings_and_launch_columns() {
    let j = parse_json("d3/details_full.csv");
    let l = j["launches"].as_array().unwrap();
    assert_eq!(l.len(), 2);
    assert!(close(value(&l[0], "Duration"), 406_240.0));
    assert!(close(value(&l[1], "Duration"), 405_984.0));
    assert_eq!(
        metric(&l[0], "Function Cache Configuration"),
        &serde_json::json!({"value": "CachePreferNone", "unit": ""})
    );
    assert_eq!(metric(&l[0], "Enabled TPC IDs")["value"], "all");
    assert_eq!(
        metric(&l[0], "Driver Shared Memory Per Block")["unit"],
        "byte/block"
    );
    assert_eq!(l[0]["attributes"]["Block Size"], "(384, 1, 1)");
    assert_eq!(l[0]["attributes"]["Grid Size"], "(9, 32, 1)");
    assert_eq!(l[0]["attributes"]["Device"], "0");
    assert_eq!(l[0]["attributes"]["CC"], "10.0");
    assert_eq!(l[0]["metrics"].as_object().unwrap().len(), 9);
}

#[test]
fn d4_metric_names_with_scaled_units() {
    let j = parse_json("d4/details_metrics.csv");
    let l = j["launches"].as_array().unwrap();
    assert_eq!(l.len(), 2);
    assert!(close(value(&l[0], "dram__bytes_read.sum"), 10.24e6));
    assert_eq!(metric(&l[0], "dram__bytes_read.sum")["unit"], "byte");
    assert!(close(value(&l[1], "gpu__time_duration.sum"), 20_000.0));
}

#[test]
fn raw_2019_separators_lists_and_old_units() {
    let j = parse_json("raw-2019/raw.csv");
    assert_eq!(j["shape"], "raw");
    let l = j["launches"].as_array().unwrap();
    assert_eq!(l.len(), 3);
    assert_eq!(l[2]["id"], 2);
    assert!(close(value(&l[0], "gpu__time_duration"), 2720.0));
    assert_eq!(metric(&l[0], "gpu__time_duration")["unit"], "ns");
    assert!(close(value(&l[0], "dram__bytes_per_sec"), 2_917_647_058.82));
    assert_eq!(metric(&l[0], "dram__bytes_per_sec")["unit"], "byte/second");
    assert!(close(value(&l[0], "device__attribute_clock_rate"), 1_759_000.0));
    assert_eq!(
        metric(&l[0], "sass__inst_executed_per_opcode")["value"],
        serde_json::json!([32.0, 32.0, 32.0, 4.0, 0.0])
    );
    assert_eq!(
        metric(&l[0], "device__attribute_display_name")["value"],
        "NVIDIA GeForce GTX 1080"
    );
    assert!(l[1]["metrics"].get("tex__hitrate_pct").is_none(), "n/a is absent");
    assert_eq!(l[0]["attributes"]["Kernel Time"], "2023-Oct-01 02:39:05");
    assert!(close(value(&l[0], "profiler__replayer_passes"), 44.0));
}

#[test]
fn raw_2025_strings_and_identity_columns() {
    let j = parse_json("raw-2025/raw.csv");
    let l = j["launches"].as_array().unwrap();
    assert_eq!(
        l[0]["kernel"],
        "void <unnamed>::w13_kernel<4, 1>(const __half *, const int *)"
    );
    assert!(close(value(&l[0], "dram__bytes_read.sum"), 5_156_128.0));
    assert!(close(value(&l[0], "gpu__time_duration.sum"), 28_448.0));
    assert_eq!(metric(&l[0], "c2clink__enabled_mask")["value"], "0x3");
    assert_eq!(
        metric(&l[0], "device__attribute_confidential_computing_mode")["value"],
        "No-CC"
    );
    assert_eq!(
        metric(&l[1], "launch__func_cache_config")["value"],
        "CachePreferNone"
    );
    assert_eq!(l[1]["attributes"]["Grid Size"], "(80, 1, 1)");
    assert!(l[1]["attributes"].get("ID").is_none());
}

#[test]
fn summary_shape_is_marked_and_keeps_min_max() {
    let j = parse_json("summary/summary.csv");
    assert_eq!(j["shape"], "summary");
    let l = j["launches"].as_array().unwrap();
    assert_eq!(l.len(), 2);
    assert_eq!(l[0]["kernel"], "saxpy_kernel");
    assert!(close(value(&l[0], "Duration"), 12_420.0));
    assert!(close(value(&l[0], "Duration [minimum]"), 12_100.0));
    assert!(close(value(&l[0], "Duration [maximum]"), 12_900.0));
    assert!(close(value(&l[0], "Elapsed Cycles"), 599_747_080.4));
    assert_eq!(l[0]["attributes"]["Invocations"], "10");
    assert_eq!(
        (l[1]["id"].as_u64(), l[1]["kernel"].as_str()),
        (Some(1), Some("reduce_kernel"))
    );
}

#[test]
fn one_phase_output_skips_prof_lines_and_keeps_warnings() {
    let j = parse_json("one-phase/output.log");
    let l = j["launches"].as_array().unwrap();
    assert_eq!(l.len(), 2);
    assert!(close(value(&l[1], "gpu__time_duration.sum"), 21_120.0));
    let w = j["warnings"].as_array().unwrap();
    assert_eq!(w.len(), 1);
    assert!(
        w[0].as_str()
            .unwrap()
            .starts_with("==WARNING== Launching the workload")
    );
}

#[test]
fn table_output_is_human_readable() {
    let out = crate::support::bin()
        .arg("parse")
        .arg(fixture("raw-2025/raw.csv"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("gpu__time_duration.sum"), "{text}");
    assert!(text.contains("28.45 us"), "{text}");
}

#[test]
fn permission_error_says_what_to_do() {
    let err = parse_error(&fixture("error-permission/output.log"));
    assert!(err.contains("error-permission/output.log"), "{err}");
    assert!(err.contains("ERR_NVGPUCTRPERM"), "{err}");
    assert!(err.contains("NVreg_RestrictProfilingToAdminUsers=0"), "{err}");
}

#[test]
fn no_kernels_is_an_error() {
    let err = parse_error(&fixture("error-no-kernels/output.log"));
    assert!(err.contains("profiled no kernels"), "{err}");
}

#[test]
fn driver_resource_error_names_dcgm() {
    let err = parse_error(&fixture("error-driver-resource/output.log"));
    assert!(err.contains("driver resource was unavailable"), "{err}");
    assert!(err.contains("dcgmi profile --pause"), "{err}");
}

#[test]
fn invalid_metric_error_names_the_metric() {
    let err = parse_error(&fixture("error-invalid-metric/output.log"));
    assert!(err.contains("`gpu__time_durations.sum`"), "{err}");
}

fn write_temp(text: &str) -> tempfile::TempPath {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
    f.into_temp_path()
}

#[test]
fn an_unknown_unit_keeps_value_and_unit_as_written() {
    // Parsing keeps it; only a threshold that needs the metric refuses it (tests/profile_cli.rs).
    let text = std::fs::read_to_string(fixture("raw-2025/raw.csv"))
        .unwrap()
        .replace("\"byte\",\"byte\",\"ns\"", "\"byte\",\"byte\",\"furlong\"");
    let path = write_temp(&text);
    let j = parse_json(path.to_str().unwrap());
    assert_eq!(
        metric(&j["launches"][0], "gpu__time_duration.sum")["unit"],
        "furlong"
    );
}

#[test]
fn malformed_number_names_line_metric_and_text() {
    let text = std::fs::read_to_string(fixture("d3/details_full.csv"))
        .unwrap()
        .replace("\"405984\"", "\"405,98\"");
    let path = write_temp(&text);
    let err = parse_error(&path);
    assert!(err.contains("line 14"), "{err}");
    assert!(err.contains("`405,98` is written with a decimal comma"), "{err}");
}

#[test]
fn text_without_a_table_is_an_error() {
    let path = write_temp("  Duration  us  63.58\n");
    let err = parse_error(&path);
    assert!(err.contains("no ncu csv table found"), "{err}");
}

/// `cgp-gate parse FILE --json | head`: the reader closes the pipe early; cgp-gate ends quietly
/// with exit 0 (not "Broken pipe" and exit 3, the code for a profiler failure). The input has
/// enough launches that the JSON is far larger than a pipe's buffer, so the write must fail.
#[test]
fn a_closed_stdout_pipe_ends_quietly_with_exit_0() {
    let recorded = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/recordings/main/vector_add/n=1048576/0.csv"),
    )
    .unwrap();
    let mut lines = recorded.lines().filter(|l| !l.starts_with("==PROF=="));
    let (header, units, row) = (
        lines.next().unwrap(),
        lines.next().unwrap(),
        lines.next().unwrap(),
    );
    let mut text = format!("{header}\n{units}\n");
    for i in 0..5000 {
        text.push_str(&row.replacen("\"0\"", &format!("\"{i}\""), 1));
        text.push('\n');
    }
    let file = write_temp(&text);
    for json in [true, false] {
        let mut cmd = crate::support::bin_std();
        cmd.arg("parse").arg(&file);
        if json {
            cmd.arg("--json");
        }
        let mut child = cmd
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Read a little, as `head -c 100` would, then close the pipe.
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 100];
        std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
        drop(stdout);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "--json {json}: {stderr}");
        assert!(stderr.is_empty(), "--json {json}: {stderr}");
    }
}
