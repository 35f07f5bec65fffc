//! The parser on real ncu output, and cgp-gate's command lines through the real ncu.
//!
//! - `tests/fixtures/ncu-wild/`: ten CSV files other projects captured on real GPUs and published
//!   (PROVENANCE.md there says where each came from). Each is parsed, snapshotted, and checked
//!   against values read by hand from the CSV (the line is named next to each check).
//! - `tests/fixtures/ncu-import/`: real ncu 2022.3 output, made by `ncu --import` from two public
//!   `.ncu-rep` reports ([`IMPORTS`] lists every command; README.md there says how). Every file
//!   is parsed; a test regenerates them with the installed ncu and compares.
//! - The real ncu (Nsight Compute 2022.3 from Debian non-free, `.ci/setup` installs it): the exact
//!   argv cgp-gate builds, for every spec feature, run with an application that launches no
//!   kernel, must reach "No kernels were profiled". Without ncu these tests print `SKIPPED: ...`
//!   and return; with `CI=true` they fail instead.

use std::path::{Path, PathBuf};
use std::process::Command;

use cgp_core::measured::samples::{CsvShape, Launch, MetricValue, ParsedOutput};
use cgp_profile::ncu::command::{NcuRelease, VERSIONED_OPTIONS, ncu_options_for, supports};
use cgp_profile::ncu::parse::{parse, parse_bytes};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

fn parse_file(rel: &str) -> ParsedOutput {
    let bytes = std::fs::read(fixture(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    parse_bytes(&bytes).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn num(l: &Launch, key: &str) -> f64 {
    match l.metrics.get(key).map(|m| &m.value) {
        Some(MetricValue::Number(v)) => *v,
        other => panic!("{key} of {}: {other:?}", l.kernel),
    }
}

fn unit<'a>(l: &'a Launch, key: &str) -> &'a str {
    &l.metrics[key].unit
}

/// Equal to 1e-9 relative (values scaled by powers of ten are not always exact in binary).
#[track_caller]
fn close(got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "got {got}, want {want}"
    );
}

/// `cgp-gate parse FILE`: (exit code, stdout, stderr).
fn cli_parse(path: &Path, json: bool) -> (i32, String, String) {
    let mut c = crate::support::bin();
    c.arg("parse");
    if json {
        c.arg("--json");
    }
    let out = c.arg(path).output().expect("run cgp-gate");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

// ---------------------------------------------------------------------------------------------
// ncu-wild: real captures by other projects

const WILD: &[&str] = &[
    "01_llmperf_details_cc120.csv",
    "02_llmperf_roofline_section.csv",
    "04_accelsim_b200_raw.csv",
    "08_l20_raw_decode_attn.csv",
    "11_moe_h100_details_progout.csv",
    "16_rodinia_v100_2020_hotspot.csv",
    "18_winpy_t4_metrics_RECONSTRUCTED.csv",
    "19_aipe_nvtx_range_details_RECONSTRUCTED.csv",
];

#[test]
fn every_wild_file_parses_to_its_snapshot() {
    for name in WILD {
        let p = parse_file(&format!("ncu-wild/{name}"));
        insta::assert_json_snapshot!(format!("wild_{}", name.trim_end_matches(".csv")), p);
    }
}

#[test]
fn every_wild_file_streams_the_same_json_it_parses_to() {
    // `parse --json` writes while reading; it must be the same as serialising the parsed value.
    for name in WILD {
        let path = fixture(&format!("ncu-wild/{name}"));
        let (code, stdout, stderr) = cli_parse(&path, true);
        assert_eq!(code, 0, "{name}: {stderr}");
        let want = serde_json::to_string(&parse_file(&format!("ncu-wild/{name}"))).unwrap();
        assert_eq!(stdout.trim_end(), want, "{name}");
    }
}

#[test]
fn wild_01_details_2025_with_rule_rows() {
    let p = parse_file("ncu-wild/01_llmperf_details_cc120.csv");
    assert_eq!((p.shape, p.launches.len()), (CsvShape::Details, 1));
    let l = &p.launches[0];
    // Line 7: "gpu__time_duration.sum","us","6.75".
    close(num(l, "gpu__time_duration.sum"), 6750.0);
    assert_eq!(unit(l, "gpu__time_duration.sum"), "ns");
    // Line 2: "dram__bytes_read.sum","Mbyte","2.33".
    close(num(l, "dram__bytes_read.sum"), 2_330_000.0);
    // Lines 14 and 23: "Memory Throughput" is "%" 19.66 in "GPU Speed Of Light Throughput" and
    // "Gbyte/s" 345.14 in "Memory Workload Analysis": both qualified, neither bare.
    close(num(l, "Memory Throughput [GPU Speed Of Light Throughput]"), 19.66);
    close(num(l, "Memory Throughput [Memory Workload Analysis]"), 345.14e9);
    assert_eq!(
        unit(l, "Memory Throughput [Memory Workload Analysis]"),
        "byte/second"
    );
    assert!(!l.metrics.contains_key("Memory Throughput"));
    // Line 42: "Block Limit Registers","block","2".
    close(num(l, "Block Limit Registers"), 2.0);
    assert_eq!(l.attributes["Grid Size"], "(224, 1, 1)");
}

#[test]
fn wild_02_body_item_labels_keep_all_22_rows() {
    let p = parse_file("ncu-wild/02_llmperf_roofline_section.csv");
    let l = &p.launches[0];
    assert_eq!(l.metrics.len(), 22, "22 metric rows, 22 keys");
    // Line 7: Body Item Label "Single Precision Roofline", "SM Frequency","Ghz","2.15"; the same
    // name occurs under "Double Precision Roofline", so the label qualifies it.
    close(
        num(
            l,
            "SM Frequency [GPU Speed Of Light Roofline Chart / Single Precision Roofline]",
        ),
        2.15e9,
    );
    // Line 13: "Double Precision Roofline", "DRAM Frequency","Ghz","13.72".
    close(
        num(
            l,
            "DRAM Frequency [GPU Speed Of Light Roofline Chart / Double Precision Roofline]",
        ),
        13.72e9,
    );
    // Line 3: "Theoretical Predicated-On FFMA Thread Instructions Executed","inst/cycle","21,760"
    // occurs once: bare key.
    close(
        num(l, "Theoretical Predicated-On FFMA Thread Instructions Executed"),
        21_760.0,
    );
    // Line 10: "Theoretical Predicated-On DFMA Operations","inst","680" (once).
    close(num(l, "Theoretical Predicated-On DFMA Operations"), 680.0);
}

#[test]
fn wild_04_b200_raw_page_with_occupancy_units() {
    let p = parse_file("ncu-wild/04_accelsim_b200_raw.csv");
    assert_eq!((p.shape, p.launches.len()), (CsvShape::Raw, 1));
    let l = &p.launches[0];
    // Row 3, column gpu__time_duration.sum: units row "us", value "22.592000".
    close(num(l, "gpu__time_duration.sum"), 22_592.0);
    // derived__pct_occupancy_per_register_count: unit "%/register" (kept as written), "4098.000000".
    close(num(l, "derived__pct_occupancy_per_register_count"), 4098.0);
    assert_eq!(unit(l, "derived__pct_occupancy_per_register_count"), "%/register");
    // derived__pct_occupancy_per_shared_mem_size: "%/Kbyte", "5.022000".
    close(num(l, "derived__pct_occupancy_per_shared_mem_size"), 5.022);
    assert_eq!(unit(l, "derived__pct_occupancy_per_shared_mem_size"), "%/Kbyte");
    // launch__registers_per_thread: "register/thread", "148".
    close(num(l, "launch__registers_per_thread"), 148.0);
    // A column without `__` that is not a launch attribute is a metric.
    assert!(l.metrics.contains_key("derived_tempMetric0"));
    assert_eq!(
        l.metrics["device__attribute_display_name"].value,
        MetricValue::Text("NVIDIA B200".into())
    );
    assert_eq!(l.attributes["CC"], "10.0");
    // 600 columns: `ID`, `Kernel Name`, 9 launch attributes and 589 metrics, of which
    // `launch__kernel_name` is empty in this row (absent): 588 metrics.
    assert_eq!(l.attributes.len(), 9);
    assert_eq!(l.metrics.len(), 588);
    assert!(!l.metrics.contains_key("launch__kernel_name"));
}

#[test]
fn wild_08_l20_raw_page_no_data_cells_are_absent() {
    let p = parse_file("ncu-wild/08_l20_raw_decode_attn.csv");
    let l = &p.launches[0];
    // Units row "us", value "57.984000".
    close(num(l, "gpu__time_duration.sum"), 57_984.0);
    // "%/register", "10252.000000".
    close(num(l, "derived__pct_occupancy_per_register_count"), 10_252.0);
    // "no data" in three columns: absent, never 0.
    for k in [
        "derived__local_spilling_requests_pct",
        "sass__inst_executed_register_spilling_mem_local",
        "sass__inst_executed_register_spilling_mem_shared",
    ] {
        assert!(!l.metrics.contains_key(k), "{k}");
    }
    // `inst_executed` (no `__`) is a metric, not an attribute.
    assert!(l.metrics.contains_key("inst_executed"));
    assert!(!l.attributes.contains_key("inst_executed"));
    assert_eq!(l.attributes["Grid Size"], "(4, 16, 1)");
}

#[test]
fn wild_11_h100_details_after_program_output() {
    let p = parse_file("ncu-wild/11_moe_h100_details_progout.csv");
    assert_eq!(p.launches.len(), 4);
    // Line 6: ID 0 "dram__throughput.avg.pct_of_peak_sustained_elapsed","%","10.89".
    close(
        num(
            &p.launches[0],
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        ),
        10.89,
    );
    // Line 18: ID 1, same metric, "10.85".
    close(
        num(
            &p.launches[1],
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        ),
        10.85,
    );
    // Line 51: ID 3 "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active","%","7.59".
    close(
        num(
            &p.launches[3],
            "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
        ),
        7.59,
    );
    assert_eq!(p.launches[0].attributes["CC"], "9.0");
}

#[test]
fn wild_16_v100_2020_details() {
    let p = parse_file("ncu-wild/16_rodinia_v100_2020_hotspot.csv");
    let l = &p.launches[0];
    assert_eq!(l.kernel, "calculate_temp");
    // Line 17: "Duration","nsecond","51360".
    close(num(l, "Duration"), 51_360.0);
    // Line 14: "Elapsed Cycles","cycle","65690".
    close(num(l, "Elapsed Cycles"), 65_690.0);
    // Line 47: "Issued Instructions","inst","14985789".
    close(num(l, "Issued Instructions"), 14_985_789.0);
    // Line 53: "Static Shared Memory Per Block","byte/block","3072".
    close(num(l, "Static Shared Memory Per Block"), 3072.0);
    assert_eq!(l.attributes["Kernel Time"], "2020-Apr-20 14:58:54");
    // "Memory Throughput" occurs once here (Memory Workload Analysis, "byte/second",
    // "286275389408.10"), so it is bare; in 01 (2025) it occurs twice and is qualified in both
    // sections, never bare: the bare key does not go to whichever section comes first.
    close(num(l, "Memory Throughput"), 286_275_389_408.10);
    assert_eq!(unit(l, "Memory Throughput"), "byte/second");
}

#[test]
fn wild_18_windows_t4_metrics_with_n_a() {
    let p = parse_file("ncu-wild/18_winpy_t4_metrics_RECONSTRUCTED.csv");
    assert_eq!(p.launches.len(), 5);
    // Line 4: ID 0 "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed","%","15.56".
    close(
        num(
            &p.launches[0],
            "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        ),
        15.56,
    );
    // Line 13: ID 1 "sm__warps_active.avg.pct_of_peak_sustained_active","%","80.37".
    close(
        num(
            &p.launches[1],
            "sm__warps_active.avg.pct_of_peak_sustained_active",
        ),
        80.37,
    );
    // Line 31: ID 4, same metric, "92.83".
    close(
        num(
            &p.launches[4],
            "sm__warps_active.avg.pct_of_peak_sustained_active",
        ),
        92.83,
    );
    // Line 8: "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.avg","","n/a": absent.
    assert!(
        !p.launches[0]
            .metrics
            .contains_key("smsp__warp_issue_stalled_long_scoreboard_per_warp_active.avg")
    );
}

#[test]
fn wild_19_nvtx_range_details() {
    let p = parse_file("ncu-wild/19_aipe_nvtx_range_details_RECONSTRUCTED.csv");
    let l = &p.launches[0];
    assert_eq!(l.kernel, "range");
    // Line 3: "gpu__time_duration.avg","ns","123480704" (once in the launch: bare key).
    close(num(l, "gpu__time_duration.avg"), 123_480_704.0);
    // Line 2 and line 7: gpu__dram_throughput... 0.06 in two sections: both qualified.
    close(
        num(
            l,
            "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed [Command line profiler metrics]",
        ),
        0.06,
    );
    // Line 10: Occupancy "sm__warps_active.avg.pct_of_peak_sustained_active","%","6.23".
    close(
        num(l, "sm__warps_active.avg.pct_of_peak_sustained_active [Occupancy]"),
        6.23,
    );
    let nvtx = "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg";
    assert!(l.attributes[nvtx].contains("compute_kernel"));
    assert!(!l.attributes.contains_key("Stream"), "`n/a` is absent");
}

#[test]
fn wild_03_errors_only_and_10_no_kernels_exit_2_with_clear_messages() {
    let (code, stdout, stderr) = cli_parse(&fixture("ncu-wild/03_llmperf_error_only.csv"), true);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("ncu rejected a `--section` option")
            && stderr.contains("did not match any section")
            && stderr.contains("ncu --list-sections"),
        "{stderr}"
    );
    let (code, stdout, stderr) = cli_parse(&fixture("ncu-wild/10_moe_noprofiled_warning.csv"), false);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty());
    assert!(stderr.contains("No kernels were profiled"), "{stderr}");
    assert!(!stderr.contains("--csv"), "not told to pass a csv: {stderr}");
}

// ---------------------------------------------------------------------------------------------
// Damaged and foreign inputs (built from the real files)

#[test]
fn a_file_cut_off_mid_row_or_inside_a_quoted_cell_names_the_line() {
    let text = std::fs::read_to_string(fixture("ncu-wild/11_moe_h100_details_progout.csv")).unwrap();
    // Cut inside the last row's quoted value (`"7.5` of line 53).
    let lines: Vec<&str> = text.lines().collect();
    let last = lines.len();
    let cut = text.trim_end().rfind("\",").unwrap();
    let inside_quote = &text[..cut - 1];
    let e = parse(inside_quote).unwrap_err();
    assert_eq!(e.line, Some(last), "{e}");
    assert!(e.message.contains("ends inside a quoted cell"), "{e}");
    // Cut between cells of the last row.
    let row_start = text.trim_end().rfind('\n').unwrap() + 1;
    let mid_row = &text[..row_start + 40];
    let mid_row = &mid_row[..=mid_row.rfind('"').unwrap()];
    let e = parse(mid_row).unwrap_err();
    assert_eq!(e.line, Some(last), "{e}");
    // A raw page cut mid-row (04 ends without a final newline and is complete).
    let raw = std::fs::read_to_string(fixture("ncu-wild/04_accelsim_b200_raw.csv")).unwrap();
    assert!(!raw.ends_with('\n'));
    let cut = &raw[..raw.len() - 300];
    let cut = &cut[..=cut.rfind('"').unwrap()];
    let e = parse(cut).unwrap_err();
    assert_eq!(e.line, Some(3), "{e}");
}

#[test]
fn utf16_with_a_bom_is_read_and_without_one_refused() {
    let text = std::fs::read_to_string(fixture("ncu-wild/18_winpy_t4_metrics_RECONSTRUCTED.csv")).unwrap();
    let mut le = vec![0xFF, 0xFE];
    le.extend(
        text.replace('\n', "\r\n")
            .encode_utf16()
            .flat_map(u16::to_le_bytes),
    );
    assert_eq!(parse_bytes(&le).unwrap(), parse(&text).unwrap());
    let mut be = vec![0xFE, 0xFF];
    be.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
    assert_eq!(parse_bytes(&be).unwrap(), parse(&text).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ps.csv");
    std::fs::write(&path, &le).unwrap();
    let (code, _, stderr) = cli_parse(&path, true);
    assert_eq!(code, 0, "{stderr}");
    // Without the BOM: refused, exit 2.
    std::fs::write(&path, &le[2..]).unwrap();
    let (code, _, stderr) = cli_parse(&path, true);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("UTF-16 without a byte-order mark"), "{stderr}");
}

#[test]
fn a_decimal_comma_locale_is_refused_from_anywhere_in_the_file() {
    let text = std::fs::read_to_string(fixture("ncu-wild/18_winpy_t4_metrics_RECONSTRUCTED.csv")).unwrap();
    // The last row's `92.83` % written as `92,83`: the whole file is refused, naming that line.
    let german = text.replacen("\"92.83\"", "\"92,83\"", 1);
    let line = german.lines().position(|l| l.contains("92,83")).unwrap() + 1;
    let e = parse(&german).unwrap_err();
    assert_eq!(e.line, Some(line));
    assert!(e.message.contains("decimal comma") && e.hint.unwrap().contains("LC_ALL=C"));
    // Durations alone: `117.344` ns (117344 ns with a `.` thousands separator) is refused too.
    let d = std::fs::read_to_string(fixture("ncu-wild/16_rodinia_v100_2020_hotspot.csv")).unwrap();
    let dotted = d.replace("\"nsecond\",\"51360\"", "\"nsecond\",\"51.360\"");
    assert_ne!(dotted, d);
    let e = parse(&dotted).unwrap_err();
    assert!(e.message.contains("`51.360`"), "{e}");
    // `1.234.567` anywhere.
    let dots = d.replace("\"14985789\"", "\"14.985.789\"");
    assert!(parse(&dots).unwrap_err().message.contains("`14.985.789`"));
}

#[test]
fn the_session_page_an_aborted_run_and_the_source_page_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.csv");
    // First lines of a real `--page session` export (CodeGandee/accelsim-test, the sibling
    // session.csv of 04_accelsim_b200_raw.csv, ncu 2025.2.1).
    std::fs::write(
        &path,
        "Launch Settings\n\"Launch Attribute\",\"Value\"\n\"Profiler Command Line\",\"ncu --set basic\"\n\n\
         Session Info\n\"Session Attribute\",\"Value\"\n\"CUDA Version\",\"13.1\"\n",
    )
    .unwrap();
    let (code, _, stderr) = cli_parse(&path, true);
    assert_eq!(code, 2);
    assert!(stderr.contains("session page (`--page session`)"), "{stderr}");
    assert!(!stderr.contains("pass the file ncu wrote with"), "{stderr}");
    // An aborted run: only the first lines of 11 (`==PROF== Connected` and program output).
    let text = std::fs::read_to_string(fixture("ncu-wild/11_moe_h100_details_progout.csv")).unwrap();
    let head: String = text.lines().take(3).map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, head).unwrap();
    let (code, _, stderr) = cli_parse(&path, true);
    assert_eq!(code, 2);
    assert!(stderr.contains("ncu did not finish"), "{stderr}");
    let (code, _, stderr) = cli_parse(&fixture("ncu-import/index.source.csv"), true);
    assert_eq!(code, 2);
    assert!(stderr.contains("source page (`--page source`)"), "{stderr}");
}

// ---------------------------------------------------------------------------------------------
// Property tests: the same table, differently wrapped

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn keys(p: &ParsedOutput) -> Vec<(u64, String, Vec<String>)> {
        p.launches
            .iter()
            .map(|l| (l.id, l.kernel.clone(), l.metrics.keys().cloned().collect()))
            .collect()
    }

    /// Split a details table into its header and its rows grouped by `Section Name`, in order.
    fn sections(text: &str) -> (String, Vec<(String, Vec<String>)>) {
        let start = text.find("\"ID\",").unwrap();
        let mut lines = text[start..].lines();
        let header = lines.next().unwrap().to_owned();
        let col = header.split("\",\"").position(|h| h == "Section Name").unwrap();
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for l in lines.filter(|l| l.starts_with('"')) {
            let rec = csv::ReaderBuilder::new()
                .has_headers(false)
                .flexible(true)
                .from_reader(l.as_bytes())
                .records()
                .next()
                .unwrap()
                .unwrap();
            let s = rec[col].to_owned();
            match out.iter_mut().find(|(n, _)| *n == s) {
                Some((_, rows)) => rows.push(l.to_owned()),
                None => out.push((s, vec![l.to_owned()])),
            }
        }
        (header, out)
    }

    const DETAILS: &[&str] = &[
        "ncu-wild/01_llmperf_details_cc120.csv",
        "ncu-wild/02_llmperf_roofline_section.csv",
        "ncu-wild/16_rodinia_v100_2020_hotspot.csv",
        "ncu-wild/19_aipe_nvtx_range_details_RECONSTRUCTED.csv",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        #[test]
        fn crlf_and_output_before_the_table_change_nothing(
            file in 0usize..DETAILS.len(),
            crlf in any::<bool>(),
            noise in proptest::collection::vec("[a-zA-Z0-9 :.,=%\"-]{0,30}", 0..4),
        ) {
            let text = std::fs::read_to_string(fixture(DETAILS[file])).unwrap();
            let want = keys(&parse(&text).unwrap());
            let start = text.find("\"ID\",").unwrap();
            // Application output, then ncu's lines, then the table.
            let mut wrapped = String::new();
            for n in &noise {
                wrapped.push_str(n.trim_start_matches('='));
                wrapped.push('\n');
            }
            wrapped.push_str("==PROF== Connected to process 42 (/app)\n==PROF== Profiling \"k\": 0%....100% - 9 passes\n==PROF== Disconnected from process 42\n");
            wrapped.push_str(&text[start..]);
            if crlf {
                wrapped = wrapped.replace('\n', "\r\n");
            }
            let got = parse(&wrapped).unwrap();
            prop_assert_eq!(keys(&got), want);
            prop_assert_eq!(got.launches, parse(&text).unwrap().launches);
        }

        #[test]
        fn reordering_sections_gives_the_same_keys(
            file in 0usize..DETAILS.len(),
            seed in any::<u64>(),
        ) {
            let text = std::fs::read_to_string(fixture(DETAILS[file])).unwrap();
            let (header, mut secs) = sections(&text);
            // A deterministic shuffle from the seed.
            let mut s = seed;
            for i in (1..secs.len()).rev() {
                s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let j = usize::try_from(s >> 33).unwrap() % (i + 1);
                secs.swap(i, j);
            }
            let mut shuffled = header.clone();
            shuffled.push('\n');
            for (_, rows) in &secs {
                for r in rows {
                    shuffled.push_str(r);
                    shuffled.push('\n');
                }
            }
            let a = parse(&text).unwrap();
            let b = parse(&shuffled).unwrap();
            prop_assert_eq!(keys(&a), keys(&b));
            prop_assert_eq!(a.launches, b.launches);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The real ncu

/// The installed ncu, or `None` after printing `SKIPPED: ...` (a failure under `CI=true`).
fn real_ncu(test: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("ncu"))
            .find(|c| c.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{test}: ncu is not installed, and CI=true: run .ci/setup (Debian non-free nsight-compute)"
        );
        println!("SKIPPED: {test}: ncu is not on PATH (install Debian's nsight-compute, see .ci/setup)");
    }
    found
}

fn ncu_version(ncu: &Path) -> String {
    let out = Command::new(ncu)
        .arg("--version")
        .output()
        .expect("ncu --version");
    cgp_profile::ncu::version::parse_version(&String::from_utf8_lossy(&out.stdout)).expect("a version line")
}

/// Every command that made the files in tests/fixtures/ncu-import: (file, arguments after
/// `ncu --import REPORT`). Each runs for both reports.
const IMPORTS: &[(&str, &[&str])] = &[
    ("raw-base", &["--csv", "--page", "raw", "--print-units", "base"]),
    ("raw-auto", &["--csv", "--page", "raw", "--print-units", "auto"]),
    (
        "details-base",
        &["--csv", "--page", "details", "--print-units", "base"],
    ),
    (
        "details-auto",
        &["--csv", "--page", "details", "--print-units", "auto"],
    ),
    ("summary-per-kernel", &["--csv", "--print-summary", "per-kernel"]),
    ("summary-per-gpu", &["--csv", "--print-summary", "per-gpu"]),
    ("summary-per-nvtx", &["--csv", "--print-summary", "per-nvtx"]),
    (
        "raw-kernel-base-function",
        &[
            "--csv",
            "--page",
            "raw",
            "--print-units",
            "base",
            "--print-kernel-base",
            "function",
        ],
    ),
    (
        "raw-kernel-base-mangled",
        &[
            "--csv",
            "--page",
            "raw",
            "--print-units",
            "base",
            "--print-kernel-base",
            "mangled",
        ],
    ),
    (
        "raw-instances",
        &[
            "--csv",
            "--page",
            "raw",
            "--print-units",
            "base",
            "--print-metric-instances",
            "values",
        ],
    ),
    ("raw-fp", &["--csv", "--page", "raw", "--print-fp"]),
    ("source", &["--csv", "--page", "source"]),
];

const REPORTS: &[&str] = &["index", "readOnlyCache"];

fn import_file(report: &str, name: &str) -> String {
    format!("ncu-import/{report}.{name}.csv")
}

#[test]
fn every_import_file_parses_and_agrees_across_options() {
    for report in REPORTS {
        let base = parse_file(&import_file(report, "raw-base"));
        assert_eq!(base.shape, CsvShape::Raw);
        for (name, _) in IMPORTS {
            let rel = import_file(report, name);
            if *name == "source" {
                // Not a table of launches: refused with a message naming the page.
                let bytes = std::fs::read(fixture(&rel)).unwrap();
                assert!(parse_bytes(&bytes).unwrap_err().message.contains("source page"));
                continue;
            }
            let p = parse_file(&rel);
            if name.starts_with("raw") {
                // The same launches and metrics whatever the units and name options: values agree
                // to the 6 decimals `--print-units auto` prints.
                assert_eq!(p.launches.len(), base.launches.len(), "{rel}");
                for (a, b) in p.launches.iter().zip(&base.launches) {
                    assert_eq!(a.id, b.id);
                    for (k, m) in &b.metrics {
                        let (MetricValue::Number(want), Some(MetricValue::Number(got))) =
                            (&m.value, a.metrics.get(k).map(|x| &x.value))
                        else {
                            continue;
                        };
                        // `base` prints 2 decimals, `auto` 6 significant places.
                        assert!(
                            (got - want).abs() <= 0.0051 + 5e-6 * want.abs(),
                            "{rel}: {k}: {got} vs {want}"
                        );
                        assert_eq!(a.metrics[k].unit, m.unit, "{rel}: {k}");
                    }
                }
            }
        }
    }
}

#[test]
fn import_files_hand_checked_values() {
    // index.raw-base.csv row 3: gpu__time_duration.sum "nsecond" "74880"; dram__bytes_read.sum
    // "byte" "32000"; launch__registers_per_thread "32"; row 4 (rowMajor): duration "1984".
    let p = parse_file("ncu-import/index.raw-base.csv");
    assert_eq!(p.launches[0].kernel, "index(int *, int, int)");
    close(num(&p.launches[0], "gpu__time_duration.sum"), 74_880.0);
    close(num(&p.launches[0], "dram__bytes_read.sum"), 32_000.0);
    close(num(&p.launches[0], "launch__registers_per_thread"), 32.0);
    close(num(&p.launches[1], "gpu__time_duration.sum"), 1984.0);
    assert_eq!(p.launches[0].attributes["Kernel Time"], "2023-Sep-13 08:29:58");
    // index.raw-auto.csv: "usecond" "74.880000", "Kbyte" "32.000000", "Gbyte/second" "0.427350".
    let p = parse_file("ncu-import/index.raw-auto.csv");
    close(num(&p.launches[0], "gpu__time_duration.sum"), 74_880.0);
    close(num(&p.launches[0], "dram__bytes_read.sum"), 32_000.0);
    close(
        num(&p.launches[0], "dram__bytes_read.sum.per_second"),
        0.427_350e9,
    );
    // readOnlyCache.raw-instances.csv: derived__avg_thread_executed "32 (32; 32; ...)": the
    // aggregate 32; numa__id_memory "(no data)" absent.
    let p = parse_file("ncu-import/readOnlyCache.raw-instances.csv");
    close(num(&p.launches[0], "derived__avg_thread_executed"), 32.0);
    close(num(&p.launches[2], "gpu__time_duration.sum"), 1952.0);
    assert_eq!(p.launches[2].kernel, "withReadCacheFunc(float *, float *)");
    // readOnlyCache.raw-kernel-base-mangled.csv: the mangled name.
    let p = parse_file("ncu-import/readOnlyCache.raw-kernel-base-mangled.csv");
    assert!(p.launches[0].kernel.starts_with("_Z"), "{}", p.launches[0].kernel);
    let p = parse_file("ncu-import/readOnlyCache.raw-kernel-base-function.csv");
    assert_eq!(p.launches[0].kernel, "withoutReadCache");
    // index.details-base.csv line 3: "Load Metrics","GLoad Throughput","byte/second","472649572.65".
    let p = parse_file("ncu-import/index.details-base.csv");
    assert_eq!(p.shape, CsvShape::Details);
    close(num(&p.launches[0], "GLoad Throughput"), 472_649_572.65);
    close(num(&p.launches[0], "Requested requests For GLoad"), 1106.0);
    // index.details-auto.csv: the same value printed in a scaled unit.
    let p = parse_file("ncu-import/index.details-auto.csv");
    assert!((num(&p.launches[0], "GLoad Throughput") - 472_649_572.65).abs() < 1e3);
    // index.summary-per-kernel.csv line 3: l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second
    // "Mbyte/second" min/max/avg "472.649573"; `Device Id` "0", `Invocations` "1".
    let p = parse_file("ncu-import/index.summary-per-kernel.csv");
    assert_eq!(p.shape, CsvShape::Summary);
    let l = &p.launches[0];
    close(
        num(l, "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second"),
        472.649_573e6,
    );
    close(
        num(
            l,
            "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second [maximum]",
        ),
        472.649_573e6,
    );
    assert_eq!(l.attributes["Invocations"], "1");
    assert_eq!(l.attributes["Device Id"], "0");
    // per-nvtx: the reports have no NVTX ranges, so the table has a header and no rows.
    assert!(
        parse_file("ncu-import/index.summary-per-nvtx.csv")
            .launches
            .is_empty()
    );
}

#[test]
fn import_files_match_what_the_real_ncu_prints_now() {
    let Some(ncu) = real_ncu("import_files_match_what_the_real_ncu_prints_now") else {
        return;
    };
    let version = ncu_version(&ncu);
    if !version.starts_with("2022.3") {
        println!("SKIPPED: the fixtures were made with ncu 2022.3, this is {version}");
        return;
    }
    let update = std::env::var_os("CGP_GATE_UPDATE_IMPORTS").is_some();
    for report in REPORTS {
        let rep = fixture(&format!("ncu-import/Lashi0812_{report}.ncu-rep"));
        for (name, args) in IMPORTS {
            let out = Command::new(&ncu)
                .arg("--import")
                .arg(&rep)
                .args(*args)
                .env("LC_ALL", "C")
                .output()
                .expect("run ncu --import");
            assert!(
                out.status.success(),
                "{report} {name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let path = fixture(&import_file(report, name));
            if update {
                std::fs::write(&path, &out.stdout).unwrap();
            }
            let committed = std::fs::read(&path).unwrap();
            assert!(
                committed == out.stdout,
                "{} differs from `ncu --import` now",
                path.display()
            );
        }
    }
}

#[test]
fn the_version_table_matches_the_real_ncu_help() {
    let Some(ncu) = real_ncu("the_version_table_matches_the_real_ncu_help") else {
        return;
    };
    let version = ncu_version(&ncu);
    let release = NcuRelease::from_version(&version);
    let help = Command::new(&ncu).arg("--help").output().expect("ncu --help");
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    assert!(help.contains("--page"), "{help}");
    for (option, first) in VERSIONED_OPTIONS {
        let has = match option.split_once(' ') {
            // An option value: the help lists the values below the option.
            Some((opt, value)) => {
                let at = help
                    .find(&format!("{opt} "))
                    .unwrap_or_else(|| panic!("{opt} in help"));
                let next = help[at + opt.len()..]
                    .find("\n  --")
                    .map_or(help.len(), |e| at + opt.len() + e);
                help[at..next].lines().any(|l| l.trim().starts_with(value))
            }
            None => help.contains(&format!("{option} ")) || help.contains(&format!("{option}\n")),
        };
        assert_eq!(
            supports(release, option),
            has,
            "ncu {version}: the table says {option} from {first}, the help says {has}"
        );
    }
    // Every option cgp-gate itself passes is in this ncu's help.
    let target = spec_targets()[0].clone();
    let argv = ncu_options_for(
        release,
        &target,
        &["gpu__time_duration.sum".into()],
        Path::new("x.csv"),
    );
    for a in argv.iter().map(|a| a.to_string_lossy().into_owned()) {
        if a.starts_with("--") {
            assert!(help.contains(&format!("{a} ")), "ncu {version} help has no {a}");
        }
    }
}

/// A spec with one target per feature the spec offers to ncu's command line.
fn spec_targets() -> Vec<cgp_spec::spec::Target> {
    let yaml = r#"version: 1
defaults:
  repetitions: 3
  timeout: 60s
targets:
  - name: plain
    command: [/bin/true]
    metrics: { gpu__time_duration.sum: "3%" }
  - name: kernel_name
    command: [/bin/true]
    kernel: vector_add
    metrics: { gpu__time_duration.sum: "3%" }
  - name: kernel_regex
    command: [/bin/true]
    kernel: regex:matmul_tiled<
    metrics: { gpu__time_duration.sum: "3%", dram__bytes_read.sum: "1%" }
  - name: kernel_regex_library
    command: [/bin/true]
    kernel: regex:nvjet|gemm|xmma|cutlass
    metrics: { gpu__time_duration.sum: "3%" }
  - name: kernel_whole_demangled_name
    command: [/bin/true]
    kernel: "void Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_128x256_64x3_nn_align2>(Params)"
    metrics: { gpu__time_duration.sum: "3%" }
  - name: nvtx
    command: [/bin/true]
    nvtx: ["gemm_range/", "regex:bench@.+/"]
    metrics: { gpu__time_duration.sum: "3%" }
  - name: launch_skip_count
    command: [/bin/true]
    kernel: reduce_sum
    launch_skip: 2
    launch_count: 5
    metrics: { gpu__time_duration.sum: "3%" }
  - name: replay_application
    command: [/bin/true]
    replay_mode: application
    cache_control: none
    metrics: { gpu__time_duration.sum: "3%" }
  - name: replay_range
    command: [/bin/true]
    replay_mode: range
    nvtx: ["region/"]
    metrics: { gpu__time_duration.sum: "3%" }
  - name: replay_app_range
    command: [/bin/true]
    replay_mode: app-range
    nvtx: ["region/"]
    metrics: { gpu__time_duration.sum: "3%" }
  - name: clocks_none
    command: [/bin/true]
    clocks: none
    clock_control: none
    metrics: { gpu__time_duration.sum: "3%" }
  - name: clocks_base
    command: [/bin/true]
    clock_control: base
    cache_control: all
    metrics: { gpu__time_duration.sum: "3%", launch__registers_per_thread: exact }
"#;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cgp-gate.yaml");
    std::fs::write(&path, yaml).unwrap();
    cgp_spec::spec::load(&path)
        .unwrap_or_else(|e| panic!("{e}"))
        .targets
}

#[test]
fn every_spec_feature_runs_through_the_real_ncu_to_no_kernels_profiled() {
    let Some(ncu) = real_ncu("every_spec_feature_runs_through_the_real_ncu_to_no_kernels_profiled") else {
        return;
    };
    let release = NcuRelease::from_version(&ncu_version(&ncu));
    let dir = tempfile::tempdir().unwrap();
    let targets = spec_targets();
    assert_eq!(targets.len(), 12);
    for t in &targets {
        // The kernel-matching rule (docs/spec.md, "Selecting kernels"): regex filters and whole
        // demangled names are matched against the demangled name; the real ncu accepts both.
        let argv: Vec<String> = ncu_options_for(release, t, &[], std::path::Path::new("x.csv"))
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let base = argv
            .iter()
            .position(|a| a == "--kernel-name-base")
            .map(|i| argv[i + 1].as_str());
        let want = match t.name.as_str() {
            "kernel_name" | "launch_skip_count" => Some("function"),
            "kernel_regex" | "kernel_regex_library" | "kernel_whole_demangled_name" => Some("demangled"),
            _ => None,
        };
        assert_eq!(base, want, "{}: {argv:?}", t.name);
        let log = dir.path().join(format!("{}.csv", t.name));
        let missing = cgp_profile::ncu::command::unsupported_options(release, t);
        if !missing.is_empty() {
            // cgp-gate refuses to run it (naming the option); the real ncu would reject it too.
            assert_eq!(t.name, "replay_app_range");
            assert_eq!(missing, ["--replay-mode app-range"]);
            let out = Command::new(&ncu)
                .args(["--replay-mode", "app-range", "/bin/true"])
                .output()
                .expect("run ncu");
            assert_eq!(out.status.code(), Some(255));
            let (option, _) =
                cgp_profile::ncu::log::usage_error(&String::from_utf8_lossy(&out.stderr)).unwrap();
            assert_eq!(option, "--replay-mode");
            continue;
        }
        let metrics = cgp_spec::plan::ncu_metrics(t);
        let mut argv = ncu_options_for(release, t, &metrics, &log);
        argv.push("/bin/true".into());
        let out = Command::new(&ncu)
            .args(&argv)
            .env("LC_ALL", "C")
            .current_dir(dir.path())
            .output()
            .expect("run ncu");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{}: {argv:?}\n{stderr}", t.name);
        let written = std::fs::read_to_string(&log).unwrap_or_default();
        // Range replay profiles ranges, not kernels, and says so.
        let want = if t.name.contains("range") {
            "==WARNING== No ranges were profiled."
        } else {
            "==WARNING== No kernels were profiled."
        };
        assert!(
            written.contains(want),
            "{}: {argv:?}\nlog: {written}\nstderr: {stderr}",
            t.name
        );
        // And cgp-gate reads that log as exactly this failure.
        let e = parse(&written).unwrap_err();
        assert_eq!(
            e.failure,
            Some(cgp_profile::profile::FailureKind::NoKernels),
            "{}",
            t.name
        );
    }
}

#[test]
fn the_real_ncu_rejecting_an_option_is_an_ncu_error_naming_it() {
    let Some(ncu) = real_ncu("the_real_ncu_rejecting_an_option_is_an_ncu_error_naming_it") else {
        return;
    };
    let version = ncu_version(&ncu);
    if supports(NcuRelease::from_version(&version), "--config-file") {
        println!("SKIPPED: ncu {version} accepts --config-file; nothing to reject");
        return;
    }
    // What cgp-gate passed before it read the version: `--config-file off`.
    let out = Command::new(&ncu)
        .args(["--config-file", "off", "--csv", "/bin/true"])
        .env("LC_ALL", "C")
        .output()
        .expect("run ncu");
    assert_eq!(out.status.code(), Some(255));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let (option, line) = cgp_profile::ncu::log::usage_error(&stderr).expect("a usage error");
    assert_eq!(option, "--config-file");
    assert_eq!(line, "unrecognised option '--config-file'");
}

#[test]
fn validate_checks_metric_names_against_the_real_ncu_for_a_known_chip() {
    let Some(_) = real_ncu("validate_checks_metric_names_against_the_real_ncu_for_a_known_chip") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("cgp-gate.yaml");
    let write = |metric: &str| {
        std::fs::write(
            &spec,
            format!(
                "version: 1\ntargets:\n  - name: t\n    command: [./app]\n    metrics:\n      gpu__time_duration.sum: \"3%\"\n      launch__registers_per_thread: exact\n      {metric}: \"1%\"\n"
            ),
        )
        .unwrap();
    };
    write("dram__bytes_read.sum");
    let ok = crate::support::bin()
        .args(["validate", "--spec"])
        .arg(&spec)
        .env("CGP_GATE_CHIP", "ga100")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&ok.stderr);
    assert_eq!(ok.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("checked against `ncu --query-metrics --chips ga100`"),
        "{stderr}"
    );
    // A misspelled rollup and a misspelled base name: exit 2, both named, with suggestions.
    write("dram__bytes_reed.sum");
    let bad = crate::support::bin()
        .args(["validate", "--spec"])
        .arg(&spec)
        .env("CGP_GATE_CHIP", "ga100")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("`dram__bytes_reed.sum`"), "{stderr}");
    assert!(stderr.contains("dram__bytes_read"), "a suggestion: {stderr}");
    write("dram__bytes_read.summ");
    let bad = crate::support::bin()
        .args(["validate", "--spec"])
        .arg(&spec)
        .env("CGP_GATE_CHIP", "ga100")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("did you mean `dram__bytes_read.sum"), "{stderr}");
    // No chip known: not checked, still valid, and it says so.
    let none = crate::support::bin()
        .args(["validate", "--spec"])
        .arg(&spec)
        .env_remove("CGP_GATE_CHIP")
        .output()
        .unwrap();
    assert_eq!(none.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&none.stderr).contains("metric names not checked: no chip known"));
}

#[test]
fn validate_without_ncu_does_not_break() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("cgp-gate.yaml");
    std::fs::write(
        &spec,
        "version: 1\ntargets:\n  - name: t\n    command: [./app]\n    metrics:\n      gpu__time_duration.summ: \"3%\"\n",
    )
    .unwrap();
    let out = crate::support::bin()
        .args(["validate", "--spec"])
        .arg(&spec)
        .env("PATH", dir.path())
        .env("CGP_GATE_CHIP", "ga100")
        .env_remove("CGP_GATE_NCU")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not checked: ncu is not installed"));
}

/// `profile --dry-run` builds the command lines for the installed ncu, says which release it
/// assumed, and without an ncu assumes the newest (with `--config-file off`).
#[test]
fn profile_dry_run_builds_the_argv_for_the_installed_ncu() {
    let dry_run = |ncu: &std::ffi::OsStr| {
        let out = crate::support::bin()
            .args(["profile", "--spec", "examples/cgp-gate.yaml", "--dry-run"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("CGP_GATE_NCU", ncu)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let none = dry_run("/nonexistent/ncu".as_ref());
    assert!(
        none.lines()
            .next()
            .unwrap()
            .contains("command lines for the newest Nsight Compute"),
        "{none}"
    );
    assert!(none.contains(" --config-file off "), "{none}");
    let Some(ncu) = real_ncu("profile_dry_run_builds_the_argv_for_the_installed_ncu") else {
        return;
    };
    let version = ncu_version(&ncu);
    let release = NcuRelease::from_version(&version).expect("a release");
    let real = dry_run(ncu.as_os_str());
    assert!(
        real.lines().next().unwrap().contains(&format!(
            "(version {version}); command lines for Nsight Compute {release}"
        )),
        "{real}"
    );
    assert_eq!(
        real.contains(" --config-file off "),
        supports(Some(release), "--config-file"),
        "{real}"
    );
    // Each printed command line is exactly what a run on this ncu passes.
    let spec =
        cgp_spec::spec::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cgp-gate.yaml")).unwrap();
    let t = &spec.targets[0];
    let argv = ncu_options_for(
        Some(release),
        t,
        &cgp_spec::plan::ncu_metrics(t),
        Path::new("<log>"),
    );
    let line: Vec<String> = std::iter::once("ncu".to_owned())
        .chain(argv.iter().map(|a| a.to_string_lossy().into_owned()))
        .collect();
    let quoted = shlex::try_join(line.iter().map(String::as_str)).unwrap();
    assert!(real.contains(&format!(": {quoted} ")), "{real}\n{line:?}");
    // A target that needs what this ncu lacks is named as refused.
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("cgp-gate.yaml");
    std::fs::write(
        &spec,
        "version: 1\ntargets:\n  - name: app_range\n    command: [/bin/true]\n    replay_mode: app-range\n    nvtx: [\"region/\"]\n    metrics: { gpu__time_duration.sum: \"3%\" }\n",
    )
    .unwrap();
    let out = crate::support::bin()
        .args(["profile", "--dry-run", "--spec"])
        .arg(&spec)
        .env("CGP_GATE_NCU", &ncu)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        text.contains("app_range: this ncu has no --replay-mode app-range"),
        !supports(Some(release), "--replay-mode app-range"),
        "{text}"
    );
}
