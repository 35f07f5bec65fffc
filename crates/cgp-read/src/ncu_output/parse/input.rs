//! Finding the table in what ncu wrote, and refusing what is not one: ncu's own failure, a BOM
//! inside, NUL bytes, a decimal-comma locale.

use super::table::grouped;
use super::*;

/// The error for an output that holds ncu's failure.
pub(super) fn failure(scan: &log::LogScan) -> ParseError {
    match log::classify(scan) {
        Some((kind, message, hint)) => ParseError {
            failure: Some(kind),
            hint: Some(hint),
            ..ParseError::new(format!("ncu reported a failure: {message}"))
        },
        None => ParseError::new("ncu reported a failure"),
    }
}

/// A byte-order mark (U+FEFF) at the start of line `line`, which is not the file's start.
pub(super) fn bom_error(line: usize) -> ParseError {
    ParseError::at(
        line,
        "a byte-order mark (U+FEFF, bytes EF BB BF) starts this line, which is not the start of \
         the file: two files were joined, or an editor added it; the table's header is not \
         recognised behind it",
    )
    .hint(
        "remove the byte-order mark (e.g. `sed -i 's/\\xEF\\xBB\\xBF//' FILE`), or use the file \
         as ncu wrote it",
    )
}

/// Two table headers in one file (issue 34): two ncu outputs joined into one (`cat 0.csv 1.csv`,
/// with or without a byte-order mark between them) were read as the last one alone. One ncu run
/// prints one table, so the file is refused, naming both header lines.
pub(super) fn second_table(text: &str) -> Option<ParseError> {
    let is_header = |l: &str| {
        // ncu's own header names its kernel column; an application's line that looks like a
        // header (`"ID","score"`, before the disconnect) is not a table of ncu's.
        let l = l.trim_start_matches('\u{feff}');
        (l.starts_with("\"ID\",") || l.starts_with("\"Process ID\",") || l.starts_with("\"Domain\","))
            && l.contains("\"Kernel Name\"")
    };
    let mut first = None;
    let mut bom = false;
    for (i, line) in text.split('\n').enumerate() {
        bom |= i > 0 && line.starts_with('\u{feff}');
        if !is_header(line) {
            continue;
        }
        match first {
            None => first = Some(i + 1),
            Some(f) => {
                let joined = if bom {
                    ", a byte-order mark (U+FEFF) between them"
                } else {
                    ""
                };
                return Some(
                    ParseError::at(
                        i + 1,
                        format!(
                            "a second table header (the first is on line {f}{joined}): two ncu outputs were joined into one file, and one ncu run prints one table"
                        ),
                    )
                    .hint("keep one ncu run per file, as ncu wrote it; profile (or record) it again"),
                );
            }
        }
    }
    None
}

/// A NUL byte in the table: ncu never writes one (kernel names are C++ names, values are
/// text), so the file is damaged. Named with its line and, when it is in a row, the row's kernel
/// (the NUL shown as `<U+0000>`): a launch must never vanish because its name no longer matches.
pub(super) fn nul_in_table(body: &str, lines_before: usize, header: &[&str]) -> Option<ParseError> {
    let at = memchr::memchr(0, body.as_bytes())?;
    let start = memchr::memrchr(b'\n', &body.as_bytes()[..at]).map_or(0, |p| p + 1);
    let end = memchr::memchr(b'\n', &body.as_bytes()[at..]).map_or(body.len(), |p| at + p);
    let line = lines_before + 1 + memchr::memchr_iter(b'\n', &body.as_bytes()[..start]).count();
    let mut record = csv::ByteRecord::new();
    let kernel = header
        .iter()
        .position(|h| *h == "Kernel Name")
        .filter(|_| start > 0)
        .and_then(|col| {
            csv_reader(&body.as_bytes()[start..end])
                .read_byte_record(&mut record)
                .ok()?;
            record
                .get(col)
                .map(|k| String::from_utf8_lossy(k).trim().to_owned())
        });
    let in_kernel = kernel.as_deref().is_some_and(|k| k.contains('\0'));
    Some(ParseError {
        kernel: kernel.map(|k| k.replace('\0', "<U+0000>")),
        ..ParseError::at(
            line,
            format!(
                "a NUL byte{}: ncu never writes one, so the file is damaged (a launch whose name \
                 no longer matches the kernel filter would silently drop out)",
                if in_kernel {
                    " in the kernel name"
                } else {
                    " in the table"
                }
            ),
        )
        .hint("use the file as ncu wrote it; record it again if it was damaged")
    })
}

/// The error for an input without a table: say what the file is instead.
pub(super) fn no_table(text: &str) -> ParseError {
    if let Some(at) = text.find('\u{feff}') {
        let line = 1 + memchr::memchr_iter(b'\n', &text.as_bytes()[..at]).count();
        return bom_error(line);
    }
    let lines = || text.lines().map(str::trim);
    if lines().any(|l| {
        l == "Launch Settings"
            || l == "Session Info"
            || l.starts_with("\"Launch Attribute\",")
            || l.starts_with("\"Session Attribute\",")
    }) {
        return ParseError::new(
            "this is ncu's session page (`--page session`): it describes the profiling session \
             (command line, host, devices), not the kernel launches",
        )
        .hint(
            "export the launches from the same report: `ncu --import REPORT --csv --page raw \
             --print-units base`",
        );
    }
    if lines().any(|l| l.starts_with("\"Address\",\"Source\"")) {
        return ParseError::new(
            "this is ncu's source page (`--page source`): it holds per-instruction counters, not \
             launches",
        )
        .hint("export the raw page: `ncu --import REPORT --csv --page raw --print-units base`");
    }
    let connected = lines()
        .filter(|l| l.starts_with("==PROF== Connected to process"))
        .count();
    let disconnected = lines()
        .filter(|l| l.starts_with("==PROF== Disconnected from process"))
        .count();
    if connected > disconnected {
        return ParseError::new(format!(
            "ncu did not finish: the output says `==PROF== Connected to process` {connected} \
             time(s) but `Disconnected` only {disconnected} time(s), and holds no table; the run \
             was aborted (killed, timed out, or the application crashed) before ncu wrote results"
        ))
        .hint(
            "rerun the profile; if it is killed again, raise the target's `timeout` or lower \
             `launch_count`, and check that the application ends on its own",
        );
    }
    if connected > 0 {
        return ParseError::new(
            "ncu ran but printed no table: the output has `==PROF==` lines only, so the results \
             went to a report file (`--export`) or ncu was run without `--csv`",
        )
        .hint(
            "export the results from the report: `ncu --import REPORT.ncu-rep --csv --page raw \
             --print-units base > run.csv`",
        );
    }
    ParseError::new(
        "no ncu csv table found: expected a header line starting with \"ID\" (raw or details \
         page) or \"Process ID\" (summary)",
    )
    .hint(
        "pass the file ncu wrote with `--csv` (e.g. `ncu --import run.ncu-rep --csv --page raw \
         --print-units base`), not the human-readable report",
    )
}

/// Byte offset of the header line and the number of lines before it.
///
/// In order of preference: the first header-like line after the last `==PROF== Disconnected`
/// (one-phase output prints the table there; application output before it may look like
/// anything), the first header-like line anywhere (an `--import` export, or a log where ncu
/// printed the table before disconnecting), the first table-like line after the last disconnect
/// (a header that starts with some other column).
pub(super) fn locate_table(text: &str) -> Option<(usize, usize)> {
    let is_header = |l: &str| {
        l.starts_with("\"ID\",") || l.starts_with("\"Process ID\",") || l.starts_with("\"Domain\",")
    };
    let mut first_header = None;
    let mut header_after_disconnect = None;
    let mut after_disconnect: Option<(usize, usize)> = None;
    let mut offset = 0;
    // Only line starts matter: `"` or `=`. Skipping the rest of each line with memchr keeps this
    // cheap on a 44 MB page.
    let bytes = text.as_bytes();
    let mut index = 0;
    while offset < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[offset..]).map_or(bytes.len(), |e| offset + e + 1);
        let line = &text[offset..end];
        if is_header(line) {
            first_header.get_or_insert((offset, index));
            header_after_disconnect.get_or_insert((offset, index));
        } else if line.starts_with("==PROF== Disconnected from process") {
            after_disconnect = Some((end, index + 1));
            header_after_disconnect = None;
        }
        offset = end;
        index += 1;
    }
    if let Some(found) = header_after_disconnect.or(first_header) {
        return Some(found);
    }
    let (start, first_index) = after_disconnect?;
    let mut offset = start;
    for (i, line) in text[start..].split_inclusive('\n').enumerate() {
        let t = line.trim();
        if !t.is_empty() && !t.starts_with("==") {
            return Some((offset, first_index + i));
        }
        offset += line.len();
    }
    None
}

/// The first sign, anywhere in the table, that ncu wrote it under a decimal-comma locale:
/// a number cell whose comma is not a thousands separator (`65,77`, `1.234,5`) or that has two
/// dots (`1.234.567`). Checked over the whole table before any value is read, so such a file is
/// refused as a whole and never read 1000x off.
pub(super) fn locale_evidence(body: &[u8], lines_before: usize) -> Option<ParseError> {
    let mut checked_to = 0;
    let digits_at = |from: usize| body[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    for pos in memchr::memchr2_iter(b',', b'.', body) {
        if pos < checked_to
            || pos == 0
            || !body[pos - 1].is_ascii_digit()
            || !body.get(pos + 1).is_some_and(u8::is_ascii_digit)
        {
            continue;
        }
        // Cheap local tests first: a well-formed group (`1,234`) or decimal point (`12.5`) needs
        // no look at its cell.
        let after = digits_at(pos + 1);
        let next = body.get(pos + 1 + after).copied();
        if body[pos] == b',' {
            let before = body[..pos]
                .iter()
                .rev()
                .take(4)
                .take_while(|b| b.is_ascii_digit())
                .count();
            if after == 3 && before <= 3 {
                continue;
            }
        } else if next != Some(b'.') && next != Some(b',') {
            continue;
        }
        // The quoted cell around it.
        let start = memchr::memrchr(b'"', &body[..pos]).map_or(0, |s| s + 1);
        let end = memchr::memchr(b'"', &body[pos..]).map_or(body.len(), |e| pos + e);
        checked_to = end;
        let cell = &body[start..end];
        if shows_decimal_comma(cell) {
            let line = lines_before + 1 + memchr::memchr_iter(b'\n', &body[..pos]).count();
            return Some(locale_error(line, &String::from_utf8_lossy(cell)));
        }
    }
    None
}

pub(super) fn locale_error(line: usize, cell: &str) -> ParseError {
    ParseError::at(
        line,
        format!(
            "`{cell}` is written with a decimal comma (or `.` thousands separators): ncu ran \
             under a locale such as de_DE, and then every number in the file is ambiguous \
             (`117.344` ns may mean 117344 ns); the whole file is refused"
        ),
    )
    .hint(
        "rerun ncu (or `ncu --import`) with `LC_ALL=C` in its environment; cgp-gate's own ncu \
         runs already do",
    )
}

/// `1.234.567` (optionally `,5` after it): `.` thousands separators. An IPv4 address (`Host Name`
/// is `127.0.0.1`, or a real address such as `192.168.100.200`) is not one.
pub(super) fn dot_grouped(item: &[u8]) -> bool {
    let int = item.split(|&b| b == b',').next().unwrap_or_default();
    let int = int.strip_prefix(b"-").unwrap_or(int);
    let groups: Vec<&[u8]> = int.split(|&b| b == b'.').collect();
    if groups.len() < 3
        || !(1..=3).contains(&groups[0].len())
        || groups[1..].iter().any(|g| g.len() != 3)
        || groups.iter().any(|g| !g.iter().all(u8::is_ascii_digit))
    {
        return false;
    }
    let ipv4 = groups.len() == 4
        && int.len() == item.len()
        && groups.iter().all(|g| {
            std::str::from_utf8(g)
                .ok()
                .and_then(|t| t.parse::<u16>().ok())
                .is_some_and(|v| v <= 255)
        });
    !ipv4
}

/// A number cell written under a decimal-comma locale (`65,77`, `1.234.567`, `1.234,5`).
pub(super) fn shows_decimal_comma(cell: &[u8]) -> bool {
    looks_numeric(cell)
        && cell
            .split(|&b| b == b';')
            .map(<[u8]>::trim_ascii)
            .any(|item| dot_grouped(item) || (item.contains(&b',') && !grouped(item)))
}

/// Digits, separators, signs and exponents only, with at least one digit.
pub(super) fn looks_numeric(cell: &[u8]) -> bool {
    cell.iter().any(u8::is_ascii_digit)
        && cell.iter().all(|b| {
            matches!(
                b,
                b'0'..=b'9' | b',' | b'.' | b'-' | b'+' | b'e' | b'E' | b';' | b' '
            )
        })
}
