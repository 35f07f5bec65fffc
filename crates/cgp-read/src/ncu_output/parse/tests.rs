//! Tests of the ncu CSV parser, on every page kind.

use super::*;

fn num(l: &Launch, m: &str) -> f64 {
    match &l.metrics[m].value {
        MetricValue::Number(v) => *v,
        other => panic!("{m}: {other:?}"),
    }
}

const D3_HEADER: &str = r#""ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value","Rule Name","Rule Type","Rule Description","Estimated Speedup Type","Estimated Speedup""#;
const D3_PREFIX: &str =
    r#""0","371693","gemm","127.0.0.1","gemm_kernel","1","7","(384, 1, 1)","(9, 32, 1)","0","10.0""#;

#[test]
fn numbers_with_grouped_separators_only() {
    let mut s = Vec::new();
    let mut n = |t: &str| parse_number(t.as_bytes(), &mut s);
    assert_eq!(n("1,759,000.00"), Some(1_759_000.0));
    assert_eq!(n("5,156,128"), Some(5_156_128.0));
    assert_eq!(n("-1,024.5"), Some(-1024.5));
    assert_eq!(n("406240"), Some(406_240.0));
    assert_eq!(n("1.5e3"), Some(1500.0));
    assert_eq!(n("0.06"), Some(0.06));
    assert_eq!(n("123456789012345678901"), Some(123_456_789_012_345_678_901.0));
    for bad in [
        "65,77", "1,2345", "1234,567", ",123", "1,,234", "1,234,", "0x3", "", "-", ".", "1.2.3", "1,23.4",
    ] {
        assert_eq!(n(bad), None, "{bad}");
    }
}

#[test]
fn the_fast_number_path_equals_str_parse() {
    let mut s = Vec::new();
    for t in [
        "0.1",
        "0.3",
        "123.456",
        "99999.99999",
        "1.7976931348623157",
        "2098360655.74",
        "3475409836.07",
        "0.000001",
        "123456789012345.6",
    ] {
        assert_eq!(parse_number(t.as_bytes(), &mut s), t.parse().ok(), "{t}");
    }
}

#[test]
fn cells_missing_text_lists_and_errors() {
    let mut s = Vec::new();
    let mut lists = Vec::new();
    let mut cell = |t: &str, numeric| read_cell(t.as_bytes(), 9, numeric, &mut lists, &mut s);
    for absent in ["n/a", "N/A", "", "no data", "No Data", "-"] {
        assert_eq!(cell(absent, true), Ok(None), "{absent}");
    }
    assert_eq!(cell("CachePreferNone", false), Ok(Some(Val::Text(9))));
    assert_eq!(cell("nan", true), Ok(Some(Val::Text(9))));
    assert_eq!(cell("1,024.00; 924.00; 0.00", true), Ok(Some(Val::List(0..3))));
    let e = cell("65,77", true).unwrap_err();
    assert!(e.contains("`65,77` is not a number"), "{e}");
    let e = cell("1.0; x", true).unwrap_err();
    assert!(e.contains("instance value `x`"), "{e}");
    assert_eq!(cell("a; b", false), Ok(Some(Val::Text(9))));
    assert_eq!(lists, vec![1024.0, 924.0, 0.0]);
}

#[test]
fn details_rows_merge_trailing_commas_and_rule_rows_skipped() {
    let text = format!(
        "{D3_HEADER}\n\
         {D3_PREFIX},\"GPU Speed Of Light Throughput\",\"Duration\",\"ns\",\"406240\",\n\
         {D3_PREFIX},\"GPU Speed Of Light Throughput\",\"SM Frequency\",\"hz\",\"1239496049.13\",\n\
         {D3_PREFIX},\"SpeedOfLight\",\"\",\"\",\"\",\"SOLBottleneck\",\"OPT\",\"This workload exhibits low compute throughput.\",\"\",\"\"\n\
         {D3_PREFIX},\"Launch Statistics\",\"Function Cache Configuration\",\"\",\"CachePreferNone\",\n\
         {D3_PREFIX},\"Launch Statistics\",\"Shared Memory Configuration Size\",\"Kbyte\",\"233.47\",\n"
    );
    let p = parse(&text).unwrap();
    assert_eq!(p.shape, CsvShape::Details);
    assert_eq!(p.launches.len(), 1);
    let l = &p.launches[0];
    assert_eq!((l.id, l.kernel.as_str()), (0, "gemm_kernel"));
    assert_eq!(num(l, "Duration"), 406_240.0);
    assert_eq!(l.metrics["SM Frequency"].unit, "Hz");
    assert!((num(l, "Shared Memory Configuration Size") - 233_470.0).abs() < 1e-6);
    assert_eq!(
        l.metrics["Function Cache Configuration"].value,
        MetricValue::Text("CachePreferNone".into())
    );
    assert_eq!(l.metrics.len(), 4, "the rule row adds nothing");
    assert_eq!(l.attributes["Block Size"], "(384, 1, 1)");
    assert_eq!(l.attributes["CC"], "10.0");
    assert!(!l.attributes.contains_key("Rule Name"));
    assert!(!l.attributes.contains_key("Section Name"));
}

#[test]
fn details_name_repeated_in_another_section_is_qualified_in_both() {
    let text = format!(
        "{D3_HEADER}\n\
         {D3_PREFIX},\"A\",\"Threads\",\"thread\",\"10\",\n\
         {D3_PREFIX},\"B\",\"Threads\",\"thread\",\"20\",\n"
    );
    let l = &parse(&text).unwrap().launches[0];
    // Neither section owns the bare key: the key never depends on which section came first.
    assert!(!l.metrics.contains_key("Threads"));
    assert_eq!(num(l, "Threads [A]"), 10.0);
    assert_eq!(num(l, "Threads [B]"), 20.0);
}

#[test]
fn details_id_with_two_kernels_is_an_error() {
    let other = D3_PREFIX.replace("gemm_kernel", "other");
    let text = format!(
        "{D3_HEADER}\n{D3_PREFIX},\"A\",\"Duration\",\"ns\",\"1\",\n{other},\"A\",\"Duration\",\"ns\",\"2\",\n"
    );
    let e = parse(&text).unwrap_err();
    assert_eq!(e.line, Some(3));
    assert!(e.message.contains("earlier rows name `gemm_kernel`"), "{e}");
}

#[test]
fn per_row_units_scale_each_value() {
    let h = r#""ID","Process ID","Process Name","Host Name","Kernel Name","Kernel Time","Context","Stream","Section Name","Metric Name","Metric Unit","Metric Value""#;
    let text = format!(
        "{h}\n\"0\",\"1\",\"a\",\"h\",\"k\",\"t\",\"1\",\"7\",\"S\",\"Duration\",\"usecond\",\"63.58\"\n\
         \"1\",\"1\",\"a\",\"h\",\"k\",\"t\",\"1\",\"7\",\"S\",\"Duration\",\"msecond\",\"1.5\"\n"
    );
    let p = parse(&text).unwrap();
    assert!((num(&p.launches[0], "Duration") - 63_580.0).abs() < 1e-6);
    assert!((num(&p.launches[1], "Duration") - 1_500_000.0).abs() < 1e-6);
    assert_eq!(p.launches[1].metrics["Duration"].unit, "ns");
    assert_eq!(p.launches[0].attributes["Kernel Time"], "t");
}

#[test]
fn raw_page_units_row_and_identity_columns() {
    let text = "\"ID\",\"Process ID\",\"Kernel Name\",\"Block Size\",\"dram__bytes_read.sum\",\"gpu__time_duration.sum\",\"inst_executed\",\"launch__func_cache_config\",\"sm__x.sum\"\n\
                \"\",\"\",\"\",\"\",\"Kbyte\",\"usecond\",\"inst\",\"\",\"inst\"\n\
                \"0\",\"9\",\"k\",\"(32, 1, 1)\",\"5,156.128\",\"28.448\",\"12\",\"CachePreferNone\",\"n/a\"\n\
                \"1\",\"9\",\"k\",\"(32, 1, 1)\",\"1.5\",\"2\",\"13\",\"CachePreferNone\",\"no data\"\n";
    let p = parse(text).unwrap();
    assert_eq!(p.shape, CsvShape::Raw);
    let l = &p.launches[0];
    assert!((num(l, "dram__bytes_read.sum") - 5_156_128.0).abs() < 1e-6);
    assert_eq!(l.metrics["dram__bytes_read.sum"].unit, "byte");
    assert!((num(l, "gpu__time_duration.sum") - 28_448.0).abs() < 1e-6);
    assert!(!l.metrics.contains_key("sm__x.sum"), "n/a is absent");
    assert!(
        !p.launches[1].metrics.contains_key("sm__x.sum"),
        "no data is absent"
    );
    // A column without `__` is a metric unless it is a known launch attribute.
    assert_eq!(num(l, "inst_executed"), 12.0);
    assert_eq!(l.attributes.get("Process ID").map(String::as_str), Some("9"));
    assert_eq!(
        l.attributes.get("Block Size").map(String::as_str),
        Some("(32, 1, 1)")
    );
    assert!(!l.attributes.contains_key("ID") && !l.attributes.contains_key("Kernel Name"));
    assert_eq!(p.launches[1].id, 1);
}

#[test]
fn streamed_numbers_are_the_bytes_serde_json_writes() {
    for v in [
        0.0,
        -0.0,
        1.0,
        -3.0,
        0.5,
        -1e-7,
        123_456_789.0,
        999_999_999_999_999.0,
        1e15,
        1e16,
        9_007_199_254_740_993.0,
        1.5e300,
        f64::NAN,
        f64::INFINITY,
    ] {
        let mut out = Vec::new();
        let mut sink = JsonSink {
            out: &mut out,
            buf: Vec::new(),
            launches: 0,
        };
        sink.number(v).unwrap();
        assert_eq!(
            String::from_utf8(sink.buf).unwrap(),
            serde_json::to_string(&v).unwrap(),
            "{v}"
        );
    }
}

#[test]
fn the_fast_row_path_reads_what_the_csv_reader_reads() {
    let head = "\"ID\",\"Kernel Name\",\"Grid Size\",\"gpu__time_duration.sum\",\"inst_executed\"\r\n\
                \"\",\"\",\"\",\"ns\",\"inst\"\r\n";
    // `==` and blank lines between rows; the last row has no line end (the CSV reader reads it).
    let rows = "\"1\",\"k(int, char *)\",\"(1, 2, 3)\",\"1,234\",\"5\"\r\n\
                ==PROF== Profiling \"k\" - 1\n\
                \n\
                \"2\",\"k\",\"(1, 2, 3)\",\"\",\"n/a\"\r\n\
                \"3\",\"k\",\"(1, 2, 3)\",\"7\",\"8\"";
    // Escaped quotes: the CSV reader reads from this row on.
    let forced = "\"0\",\"say \"\"hi\"\"\",\"(1, 1, 1)\",\"1\",\"1\"\r\n";
    let fast = parse(&format!("{head}{rows}")).unwrap();
    let slow = parse(&format!("{head}{forced}{rows}")).unwrap();
    assert_eq!(slow.launches[0].kernel, "say \"hi\"");
    assert_eq!(fast.launches.len(), 3);
    assert_eq!(fast.launches[..], slow.launches[1..]);
    assert_eq!(fast.launches[0].kernel, "k(int, char *)");
    assert_eq!(num(&fast.launches[0], "gpu__time_duration.sum"), 1234.0);
    // Errors name the same lines on both paths.
    let bad = |before: &str| {
        parse(&format!("{head}{before}\"9\",\"k\",\"(1, 1, 1)\",\"x\",\"1\"\n"))
            .unwrap_err()
            .line
    };
    assert_eq!(bad(""), Some(3));
    assert_eq!(bad("==PROF== x\n\n"), Some(5));
    assert_eq!(bad(forced), Some(4));
    assert_eq!(bad("\"0\",\"two\nlines\",\"(1, 1, 1)\",\"1\",\"1\"\n"), Some(5));
    // A file cut off after rows the fast path read.
    let row = "\"1\",\"k\",\"(1, 2, 3)\",\"1\",\"5\"\n";
    let e = parse(&format!("{head}{row}\"2\",\"k\",\"(1, 2")).unwrap_err();
    assert_eq!(e.line, Some(4));
    assert!(e.message.contains("ends inside a quoted cell"), "{e}");
    let e = parse(&format!("{head}{row}\"2\",\"k\"")).unwrap_err();
    assert_eq!(e.line, Some(4));
    assert!(e.message.contains("cut off mid-row"), "{e}");
}

#[test]
fn a_raw_row_with_missing_cells_is_an_error() {
    let text = "\"ID\",\"Kernel Name\",\"a__b\",\"a__c\"\n\"\",\"\",\"ns\",\"ns\"\n\"0\",\"k\",\"1\"\n\"1\",\"k\",\"1\",\"2\"\n";
    let e = parse(text).unwrap_err();
    assert_eq!(e.line, Some(3));
    assert!(e.message.contains("3 cells but the header has 4"), "{e}");
}

#[test]
fn raw_page_without_units_row_is_an_error() {
    let text = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"0\",\"k\",\"5\"\n";
    let e = parse(text).unwrap_err();
    assert_eq!(e.line, Some(2));
    assert!(e.message.contains("units row"), "{e}");
}

#[test]
fn an_unknown_unit_keeps_its_value_and_unit_as_written() {
    let text = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"x__y\"\n\"\",\"\",\"furlong\",\"%/register\"\n\"0\",\"k\",\"5\",\"0.5\"\n";
    let l = &parse(text).unwrap().launches[0];
    assert_eq!(num(l, "gpu__time_duration.sum"), 5.0);
    assert_eq!(l.metrics["gpu__time_duration.sum"].unit, "furlong");
    assert_eq!(l.metrics["x__y"].unit, "%/register");
}

#[test]
fn malformed_number_and_bad_id() {
    let text = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n\"0\",\"k\",\"65,77\"\n";
    let e = parse(text).unwrap_err();
    assert_eq!(e.line, Some(3));
    assert!(
        e.message.contains("`65,77` is written with a decimal comma"),
        "{e}"
    );
    let text = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n\"x\",\"k\",\"1\"\n";
    let e = parse(text).unwrap_err();
    assert!(e.message.contains("`ID` `x`"), "{e}");
}

#[test]
fn header_after_disconnect_and_prof_lines_skipped() {
    let text = "app says hi\n\"ID\" is what the app prints\n==PROF== Connected to process 5\n\
                ==PROF== Profiling \"k\": 0%....100% - 1 passes\n==PROF== Disconnected from process 5\n\
                \"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n\
                ==WARNING== something odd\n\"0\",\"k\",\"7\"\n";
    let p = parse(text).unwrap();
    assert_eq!(p.launches.len(), 1);
    assert_eq!(num(&p.launches[0], "gpu__time_duration.sum"), 7.0);
    assert_eq!(p.warnings, vec!["==WARNING== something odd"]);
}

#[test]
fn line_numbers_count_skipped_lines() {
    let text = "==PROF== Disconnected from process 5\n\"ID\",\"Kernel Name\",\"a__b\"\n\"\",\"\",\"ns\"\n\
                ==PROF== x\n==PROF== y\n\"0\",\"k\",\"bad\"\n";
    assert_eq!(parse(text).unwrap_err().line, Some(6));
}

#[test]
fn a_header_like_application_line_before_the_disconnect_is_skipped() {
    let text = "\"ID\",\"score\"\n\"1\",\"2\"\n==PROF== Disconnected from process 5\n\
                \"ID\",\"Kernel Name\",\"a__b\"\n\"\",\"\",\"ns\"\n\"0\",\"k\",\"1\"\n";
    let p = parse(text).unwrap();
    assert_eq!(p.launches[0].kernel, "k");
}

#[test]
fn table_printed_before_the_disconnect_line() {
    let text = "==PROF== Connected to process 5\n\"ID\",\"Kernel Name\",\"a__b\"\n\"\",\"\",\"ns\"\n\
                \"0\",\"k\",\"1\"\n==PROF== Disconnected from process 5\n";
    assert_eq!(parse(text).unwrap().launches.len(), 1);
}

#[test]
fn header_found_after_disconnect_when_it_starts_elsewhere() {
    let text = "==PROF== Disconnected from process 5\n\n\"Kernel Name\",\"ID\",\"a__b\"\n\"\",\"\",\"ns\"\n\"k\",\"3\",\"1\"\n";
    let p = parse(text).unwrap();
    assert_eq!(p.launches[0].id, 3);
}

#[test]
fn errors_and_missing_table() {
    let e = parse("==PROF== Connected to process 1\n==WARNING== No kernels were profiled.\n").unwrap_err();
    assert_eq!(e.failure, Some(FailureKind::NoKernels));
    let e = parse("hello\n").unwrap_err();
    assert!(e.message.starts_with("no ncu csv table found"));
    assert_eq!(e.failure, None);
    let e = parse("==ERROR== An error was reported by the driver\n\"ID\",\"Kernel Name\"\n").unwrap_err();
    assert_eq!(e.failure, Some(FailureKind::ProfilerError));
    let e = parse("\"ID\",\"Process ID\",\"Metric Name\",\"Metric Value\"\n").unwrap_err();
    assert!(e.message.contains("no `Kernel Name` column"), "{e}");
    assert_eq!(e.line, Some(1));
}

#[test]
fn summary_uses_average_and_keeps_min_max() {
    let text = "\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Invocations\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Minimum\",\"Maximum\",\"Average\"\n\
        \"1\",\"a\",\"h\",\"k\",\"(256, 1, 1)\",\"(8, 1, 1)\",\"0\",\"8.0\",\"5\",\"S\",\"Duration\",\"us\",\"1.00\",\"3.00\",\"2.00\"\n\
        \"1\",\"a\",\"h\",\"k\",\"(256, 1, 1)\",\"(8, 1, 1)\",\"0\",\"8.0\",\"5\",\"S\",\"Elapsed Cycles\",\"cycle\",\"599,747,068.80\",\"599,747,068.80\",\"599,747,068.80\"\n\
        \"1\",\"a\",\"h\",\"k\",\"(128, 1, 1)\",\"(8, 1, 1)\",\"0\",\"8.0\",\"2\",\"S\",\"Duration\",\"us\",\"4.00\",\"4.00\",\"4.00\"\n";
    let p = parse(text).unwrap();
    assert_eq!(p.shape, CsvShape::Summary);
    assert_eq!(p.launches.len(), 2);
    let l = &p.launches[0];
    assert_eq!(num(l, "Duration"), 2000.0);
    assert_eq!(num(l, "Duration [minimum]"), 1000.0);
    assert_eq!(num(l, "Duration [maximum]"), 3000.0);
    assert!((num(l, "Elapsed Cycles") - 599_747_068.8).abs() < 1e-6);
    assert_eq!(l.attributes["Invocations"], "5");
    assert_eq!(
        (p.launches[1].id, p.launches[1].attributes["Block Size"].as_str()),
        (1, "(128, 1, 1)")
    );
}

mod properties {
    use super::super::*;
    use proptest::prelude::*;

    fn grouped_text(n: u64) -> String {
        let d = n.to_string();
        let mut out = String::new();
        for (i, c) in d.chars().enumerate() {
            if i > 0 && (d.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    }

    proptest! {
        #[test]
        fn grouped_numbers_round_trip(n in 0u64..1_000_000_000_000, frac in 0u32..100) {
            let mut s = Vec::new();
            let text = format!("{}.{frac:02}", grouped_text(n));
            let want = format!("{n}.{frac:02}").parse::<f64>().unwrap();
            prop_assert_eq!(parse_number(text.as_bytes(), &mut s), Some(want));
        }

        #[test]
        fn any_input_is_parsed_or_rejected_without_panic(
            lines in proptest::collection::vec("[\"a-z0-9,;./%= \\-]{0,40}", 0..8),
            header in 0usize..3,
        ) {
            let head = ["\"ID\",\"Kernel Name\",\"a__b\"\n", "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n", ""][header];
            let text = format!("{head}{}", lines.join("\n"));
            let _ = parse(&text);
            let _ = log::scan(&text);
        }
    }
}

const RAW: &str = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum\"\n\
                   \"\",\"\",\"ns\",\"\"\n\
                   \"0\",\"k\",\"1000\",\"0\"\n\
                   \"1\",\"k\",\"1010\",\"0\"\n";

#[test]
fn a_repeated_metric_column_is_refused_even_with_a_trailing_space() {
    for name in ["gpu__time_duration.sum", "gpu__time_duration.sum "] {
        let text = RAW
            .replace("shared.sum\"\n", &format!("shared.sum\",\"{name}\"\n"))
            .replace("\"\"\n\"0\"", "\"\",\"ns\"\n\"0\"")
            .replace("\"0\"\n\"1\"", "\"0\",\"2000\"\n\"1\"")
            .replace("\"1010\",\"0\"", "\"1010\",\"0\",\"2020\"");
        let e = parse(&text).unwrap_err();
        assert_eq!(e.line, Some(1), "{e}");
        assert_eq!(e.metric.as_deref(), Some("gpu__time_duration.sum"), "{e}");
        assert!(e.message.contains("columns 3 and 5"), "{e}");
    }
    // A repeated required column of the details page too.
    let header = D3_HEADER.replace("\"Metric Value\"", "\"Metric Value\",\"Metric Value\"");
    let e = parse(&format!(
        "{header}\n{D3_PREFIX},\"A\",\"Duration\",\"ns\",\"1\",\"2\",\n"
    ))
    .unwrap_err();
    assert!(e.message.contains("`Metric Value` twice"), "{e}");
}

#[test]
fn a_repeated_launch_is_refused_in_the_raw_and_details_pages() {
    let text = format!("{RAW}\"0\",\"k\",\"1000\",\"0\"\n");
    let e = parse(&text).unwrap_err();
    assert_eq!(e.line, Some(5));
    assert!(
        e.message.contains("`ID` 0 appears twice (first on line 3)"),
        "{e}"
    );
    // Details: a launch's rows again after another launch's.
    let one = D3_PREFIX.replace("\"0\",", "\"1\",");
    let text = format!(
        "{D3_HEADER}\n{D3_PREFIX},\"A\",\"Duration\",\"ns\",\"1\",\n{one},\"A\",\"Duration\",\"ns\",\"2\",\n{D3_PREFIX},\"A\",\"Duration\",\"ns\",\"1\",\n"
    );
    let e = parse(&text).unwrap_err();
    assert_eq!(e.line, Some(4));
    assert!(
        e.message.contains("appears again after the rows of launch 1"),
        "{e}"
    );
    // Rows of one launch together, over several sections, still merge.
    let text = format!(
        "{D3_HEADER}\n{D3_PREFIX},\"A\",\"Duration\",\"ns\",\"1\",\n{D3_PREFIX},\"B\",\"Other\",\"ns\",\"2\",\n"
    );
    assert_eq!(parse(&text).unwrap().launches.len(), 1);
}

#[test]
fn a_nul_byte_in_the_table_is_an_error_naming_the_kernel() {
    let text = RAW.replacen("\"k\"", "\"k\0x\"", 1);
    let e = parse(&text).unwrap_err();
    assert_eq!(e.line, Some(3));
    assert_eq!(e.kernel.as_deref(), Some("k<U+0000>x"));
    assert!(e.message.contains("NUL byte in the kernel name"), "{e}");
    // The application's output before the table may hold anything.
    let text = format!("app\0output\n==PROF== Disconnected from process 1\n{RAW}");
    assert_eq!(parse(&text).unwrap().launches.len(), 2);
}

#[test]
fn byte_order_marks_and_cr_only_line_ends_are_named() {
    // A leading BOM (a file read as text keeps it) is skipped, as `parse_bytes` does.
    assert_eq!(parse(&format!("\u{feff}{RAW}")).unwrap().launches.len(), 2);
    for text in [format!("\u{feff}\u{feff}{RAW}"), format!("x\n\u{feff}{RAW}")] {
        let e = parse(&text).unwrap_err();
        assert!(e.message.contains("byte-order mark"), "{e}");
    }
    let e = parse(&RAW.replace('\n', "\r")).unwrap_err();
    assert!(e.message.contains("carriage return only"), "{e}");
}

#[test]
fn a_filtered_parse_still_refuses_a_decimal_comma_locale_in_columns_it_does_not_read() {
    // The wanted column is clean; another column shows the locale (a comma that groups no
    // thousands, `.`-grouped digits, nanoseconds with a 3-digit fraction): the file is refused.
    let wanted: BTreeSet<String> = ["a__x".to_owned()].into();
    for (unit, cell) in [("byte", "65,77"), ("", "1.234.567"), ("ns", "117.344")] {
        let text = format!(
            "\"ID\",\"Kernel Name\",\"a__x\",\"b__y\"\n\"\",\"\",\"inst\",\"{unit}\"\n\"0\",\"k\",\"1\",\"2\"\n\"1\",\"k\",\"1\",\"{cell}\"\n"
        );
        let e = parse_only(&text, &wanted).unwrap_err();
        assert_eq!(e.line, Some(4), "{cell}: {e}");
        assert!(e.message.contains("decimal comma"), "{cell}: {e}");
        assert!(parse(&text).is_err());
    }
    // Cells with a dot or a grouping comma that show nothing are fine, and not read.
    let text = "\"ID\",\"Kernel Name\",\"a__x\",\"b__y\",\"c__z\"\n\"\",\"\",\"inst\",\"byte\",\"ns\"\n\"0\",\"k\",\"1\",\"1,234,567.5\",\"117.34\"\n";
    let full = parse(text).unwrap();
    let only = parse_only(text, &wanted).unwrap();
    assert_eq!(full.launches[0].metrics.len(), 3);
    assert_eq!(only.launches[0].metrics.len(), 1);
    assert_eq!(only.launches[0].metrics["a__x"], full.launches[0].metrics["a__x"]);
    // A details page keeps only the wanted keys too.
    let details = "\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\
                   \"0\",\"k\",\"S\",\"a__x\",\"inst\",\"5\"\n\"0\",\"k\",\"S\",\"b__y\",\"inst\",\"6\"\n";
    let only = parse_only(details, &wanted).unwrap();
    assert_eq!(only.launches[0].metrics.keys().collect::<Vec<_>>(), ["a__x"]);
}

#[test]
fn a_repeated_column_is_named_in_header_order_by_every_parse() {
    // Two names repeated, out of ncu's sorted order: the first repeat in header order (`z__b`,
    // columns 3 and 5) is named, whether the columns are read or only skipped.
    let text = "\"ID\",\"Kernel Name\",\"z__b\",\"a__x\",\"z__b\",\"a__x\"\n\"\",\"\",\"ns\",\"ns\",\"ns\",\"ns\"\n\"0\",\"k\",\"1\",\"2\",\"3\",\"4\"\n";
    let wanted: [BTreeSet<String>; 3] = [
        ["a__x".to_owned()].into(),
        ["z__b".to_owned()].into(),
        BTreeSet::new(),
    ];
    let errors = wanted
        .iter()
        .map(|w| parse_only(text, w).unwrap_err())
        .chain([parse(text).unwrap_err()]);
    for e in errors {
        assert!(e.message.contains("column `z__b` twice (columns 3 and 5"), "{e}");
        assert_eq!(e.metric.as_deref(), Some("z__b"), "{e}");
        assert_eq!(e.line, Some(1), "{e}");
    }
    // One repeat only, of a column not read: still refused.
    let one = text.replace("\"z__b\",\"a__x\"\n", "\"z__c\",\"a__x\"\n");
    let e = parse_only(&one, &["z__b".to_owned()].into()).unwrap_err();
    assert!(e.message.contains("column `a__x` twice (columns 4 and 6"), "{e}");
}
