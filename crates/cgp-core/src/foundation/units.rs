//! Units as Nsight Compute prints them, normalised to base units.
//!
//! Base units: `ns` for time, `byte` for sizes, `Hz` for frequencies, `byte/second` for throughput,
//! `%` for percentages. Counts (`inst`, `cycle`, `sector`, ...) keep their unit. Byte and time prefixes
//! scale by 1000, as the Nsight Compute docs state ("Kbyte" is 1000 bytes).

use std::fmt;

use serde::{Deserialize, Serialize};

/// A physical dimension that has a base unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dimension {
    Time,
    Bytes,
    Frequency,
    Throughput,
    /// `%`, and `%` compounds such as `%/register` (kept as written).
    Percent,
    /// A count or ratio with its own unit name (`inst`, `cycle`, `register/thread`, `sector/second`,
    /// ...), or none. Needs no scaling.
    Count,
    /// A unit cgp-gate cannot interpret: the value is kept as written, with its unit as written. It
    /// is an error only where a threshold or a derived metric needs the metric.
    Unknown,
}

/// A unit, once normalised: the base unit's name and the factor from the printed unit to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Normalised {
    /// Name of the base unit the value is expressed in after scaling (`ns`, `byte`, `Hz`, ...), or
    /// the unit as written when it needs no scaling or cannot be interpreted.
    pub base: String,
    /// Multiply a printed value by this to get base units.
    pub factor: f64,
    pub dimension: Dimension,
}

impl Normalised {
    /// Whether cgp-gate understood the unit (its values can be compared with thresholds).
    pub fn is_known(&self) -> bool {
        self.dimension != Dimension::Unknown
    }
}

/// Error for a unit cgp-gate cannot interpret. The caller adds the metric and file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown unit `{0}`")]
pub struct UnknownUnit(pub String);

/// Count-like units seen in ncu output; they need no scaling. Compound forms (`register/thread`,
/// `warp/cycle`, `byte/block`) are accepted when each part is a count, a byte unit or a time.
/// Plural spellings occur in `--set full` output (`sectors`, `branches`).
const COUNT_UNITS: &[&str] = &[
    "inst",
    "cycle",
    "sector",
    "sectors",
    "request",
    "requests",
    "warp",
    "warps",
    "block",
    "blocks",
    "thread",
    "threads",
    "SM",
    "cluster",
    "register",
    "wavefront",
    "instance",
    "pass",
    "launch",
    "ctas",
    "cta",
    "kernel",
    "issue",
    "ratio",
    "sample",
    "samples",
    "branches",
    "branch",
    "byte",
    "bit",
    "x",
    "",
];

/// SI prefixes ncu puts on byte counts and rates (factor 1000, as the Nsight Compute docs say).
fn si_prefix(c: char) -> Option<f64> {
    Some(match c {
        'K' | 'k' => 1e3,
        'M' => 1e6,
        'G' => 1e9,
        'T' => 1e12,
        'P' => 1e15,
        _ => return None,
    })
}

/// A time unit as a number of nanoseconds (`ns`, `nsecond`, `us`, `usecond`, ...).
fn time_ns(u: &str) -> Option<f64> {
    Some(match u {
        "nsecond" | "ns" => 1.0,
        "usecond" | "us" => 1e3,
        "msecond" | "ms" => 1e6,
        "second" | "s" => 1e9,
        _ => return None,
    })
}

/// A byte count with an optional SI prefix (`byte`, `Kbyte`, `Gbyte`, `KB`, `B`): the factor.
fn bytes(u: &str) -> Option<f64> {
    if u == "byte" || u == "B" {
        return Some(1.0);
    }
    let mut chars = u.chars();
    let f = si_prefix(chars.next()?)?;
    matches!(chars.as_str(), "byte" | "B").then_some(f)
}

/// Normalise a unit as printed by ncu, by rule:
///
/// - time (`nsecond`/`ns` ... `second`/`s`) to `ns`;
/// - `byte` with an SI prefix (`Kbyte` = 1000 bytes) to `byte`;
/// - frequencies (`hz`, `Mhz`, `cycle/second`, `cycle/ns`) to `Hz`;
/// - any rate `X/second`, `X/s`, `X/ms`, `X/us`, `X/ns` (with an SI prefix on `X`) to `X/second`
///   (`byte/second` for bytes);
/// - `%` and `%` compounds (`%/register`) as written;
/// - counts (`inst`, `sector`, `register/thread`, ...) as written.
///
/// # Errors
/// [`UnknownUnit`] when the spelling fits none of these rules. Callers that only read values keep
/// the value and the unit as written ([`normalise_or_keep`]).
pub fn normalise(unit: &str) -> Result<Normalised, UnknownUnit> {
    let u = unit.trim();
    let n = |base: &str, factor: f64, dimension| Normalised {
        base: base.to_owned(),
        factor,
        dimension,
    };
    if let Some(f) = time_ns(u) {
        return Ok(n("ns", f, Dimension::Time));
    }
    if let Some(f) = bytes(u) {
        return Ok(n("byte", f, Dimension::Bytes));
    }
    match u {
        "hz" | "Hz" => return Ok(n("Hz", 1.0, Dimension::Frequency)),
        "%" | "pct" => return Ok(n("%", 1.0, Dimension::Percent)),
        _ => {}
    }
    // `Khz`, `Mhz`, `GHz`.
    if let Some(rest) = u.strip_suffix("hz").or_else(|| u.strip_suffix("Hz"))
        && let Some(f) = rest
            .chars()
            .next()
            .and_then(si_prefix)
            .filter(|_| rest.len() == 1)
    {
        return Ok(n("Hz", f, Dimension::Frequency));
    }
    if u.starts_with('%') {
        return Ok(n(u, 1.0, Dimension::Percent));
    }
    if let Some((num, den)) = u.split_once('/')
        && !den.contains('/')
    {
        // A rate: `X/second`, `X/s`, `X/ms`, `X/us`, `X/ns`.
        if let Some(per_ns) = time_ns(den) {
            let per_second = 1e9 / per_ns;
            if num == "cycle" {
                return Ok(n("Hz", per_second, Dimension::Frequency));
            }
            if let Some(f) = bytes(num) {
                return Ok(n("byte/second", f * per_second, Dimension::Throughput));
            }
            if COUNT_UNITS.contains(&num) && !num.is_empty() {
                return Ok(n(&format!("{num}/second"), per_second, Dimension::Count));
            }
            let mut chars = num.chars();
            if let Some(f) = chars.next().and_then(si_prefix)
                && COUNT_UNITS.contains(&chars.as_str())
                && !chars.as_str().is_empty()
            {
                return Ok(n(
                    &format!("{}/second", chars.as_str()),
                    f * per_second,
                    Dimension::Count,
                ));
            }
            return Err(UnknownUnit(u.to_owned()));
        }
        // `Kbyte/block`: a scaled byte count per count unit.
        if let Some(f) = bytes(num)
            && f > 1.0
            && COUNT_UNITS.contains(&den)
            && !den.is_empty()
        {
            return Ok(n(&format!("byte/{den}"), f, Dimension::Count));
        }
    }
    if is_count_unit(u) {
        return Ok(n(u, 1.0, Dimension::Count));
    }
    Err(UnknownUnit(u.to_owned()))
}

/// [`normalise`], or the unit as written with factor 1 and [`Dimension::Unknown`].
pub fn normalise_or_keep(unit: &str) -> Normalised {
    normalise(unit).unwrap_or_else(|UnknownUnit(u)| Normalised {
        base: u,
        factor: 1.0,
        dimension: Dimension::Unknown,
    })
}

fn is_count_unit(u: &str) -> bool {
    if COUNT_UNITS.contains(&u) {
        return true;
    }
    // Compound units such as `register/thread`, `warp/cycle`, `byte/block`, `inst/cycle`,
    // `msecond/cycle`.
    let mut parts = u.split('/');
    let ok = |p: &str| COUNT_UNITS.contains(&p) || time_ns(p).is_some();
    match (parts.next(), parts.next(), parts.next()) {
        (Some(a), Some(b), None) => !a.is_empty() && !b.is_empty() && ok(a) && ok(b),
        _ => false,
    }
}

/// A quantity with a base unit, as used by thresholds (`500ns`, `2MB`, `1.5%`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quantity {
    /// Value in base units.
    pub value: f64,
    /// Base unit (`ns`, `byte`, `Hz`, `byte/second`, `%`, or a count unit; empty for a bare number).
    pub unit: String,
}

impl Quantity {
    /// Parse `500ns`, `1.5 us`, `2MB`, `3%`, `12` (bare number, no unit).
    ///
    /// # Errors
    /// A message saying what is wrong with the text.
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim();
        // The number ends where the unit starts: the first letter, `%` or space.
        let split = t
            .find(|c: char| c.is_ascii_alphabetic() || c == '%' || c.is_whitespace())
            .unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let value: f64 = num.parse().map_err(|_| {
            format!("`{text}` is not a number with an optional unit (e.g. `500ns`, `2MB`, `1%`)")
        })?;
        if !value.is_finite() {
            return Err(format!("`{text}` is not a finite number"));
        }
        let unit = unit.trim();
        if unit.is_empty() {
            return Ok(Self {
                value,
                unit: String::new(),
            });
        }
        let n = normalise(unit).map_err(|e| {
            format!("{e} in `{text}`; use ns/us/ms/s, byte/KB/MB/GB, Hz/MHz/GHz, byte/second/GB/s, % or a count unit")
        })?;
        Ok(Self {
            value: value * n.factor,
            unit: n.base,
        })
    }
}

/// As a person writes it (issue 46): in the largest unit of its kind the value reaches, so a
/// spec's `1us` reads `1us`, not `1000ns`; `500ns`, `1.5ms`, `2MB`. The text parses back to the
/// same quantity.
impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(steps) = display_steps(&self.unit) {
            let (factor, name) = display_step(self.value.abs(), steps);
            if factor > 1.0 {
                return write!(f, "{}{name}", format_number(self.value / factor));
            }
        }
        write!(f, "{}{}", format_number(self.value), self.unit)
    }
}

/// Format a number compactly for humans and diffs: integers without a fraction, others with up
/// to 6 significant digits.
pub fn format_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.6}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_owned()
    }
}

/// The display prefixes of a base unit, largest first: factor and name (`(1e3, "us")` for `ns`).
/// `None` for units shown as they are (`%`, counts).
pub fn display_steps(base_unit: &str) -> Option<&'static [(f64, &'static str)]> {
    Some(match base_unit {
        "ns" => &[(1e9, "s"), (1e6, "ms"), (1e3, "us"), (1.0, "ns")],
        "byte" => &[(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "KB"), (1.0, "B")],
        "Hz" => &[(1e9, "GHz"), (1e6, "MHz"), (1e3, "kHz"), (1.0, "Hz")],
        "byte/second" => &[
            (1e12, "TB/s"),
            (1e9, "GB/s"),
            (1e6, "MB/s"),
            (1e3, "KB/s"),
            (1.0, "B/s"),
        ],
        "flop/second" => &[
            (1e12, "TFLOP/s"),
            (1e9, "GFLOP/s"),
            (1e6, "MFLOP/s"),
            (1.0, "FLOP/s"),
        ],
        "flop" => &[(1e12, "TFLOP"), (1e9, "GFLOP"), (1e6, "MFLOP"), (1.0, "FLOP")],
        _ => return None,
    })
}

/// The display step for a magnitude: the largest prefix not above it (the smallest otherwise).
pub fn display_step(max_abs: f64, steps: &[(f64, &'static str)]) -> (f64, &'static str) {
    steps
        .iter()
        .copied()
        .find(|(f, _)| max_abs >= *f)
        .unwrap_or_else(|| steps[steps.len() - 1])
}

/// Render a value in base units as a person reads it: `406.24 us`, `1.2 GB/s`, `52.1 %`.
pub fn human(value: f64, base_unit: &str) -> String {
    if let Some(steps) = display_steps(base_unit) {
        let (f, name) = display_step(value.abs(), steps);
        return format!("{} {name}", sig3(value / f));
    }
    match base_unit {
        "%" => format!("{} %", sig3(value)),
        "" => sig3(value),
        other => format!("{} {other}", sig3(value)),
    }
}

/// The display unit for values of a base unit up to `max_abs` (`us` for 247000 ns), and the
/// factor to divide by: several values shown in one unit (a table row's baseline and candidate).
pub fn display_unit(max_abs: f64, base_unit: &str) -> (f64, String) {
    match display_steps(base_unit) {
        Some(steps) => {
            let (f, name) = display_step(max_abs, steps);
            (f, name.to_owned())
        }
        None => (1.0, base_unit.to_owned()),
    }
}

/// A value already divided into its display unit, as [`human`] writes the number (up to 4
/// significant digits), without the unit.
pub fn number_in_unit(value: f64) -> String {
    sig3(value)
}

/// Up to 4 significant digits, no exponent for everyday magnitudes.
fn sig3(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    if v.fract() == 0.0 && v.abs() < 1e12 {
        return format!("{v:.0}");
    }
    let digits = 4 - 1 - v.abs().log10().floor() as i32;
    let d = digits.clamp(0, 6) as usize;
    format!("{v:.d$}")
}

/// Whether `metric` is a kernel's duration (`gpu__time_duration.sum`, `.avg`, ...; not the
/// `.per_second` rate): a value of 0 ns is impossible for a launch (the shortest kernel takes
/// about a microsecond), so a 0 there is damaged input. Other metrics may well be 0 (counters
/// such as bank conflicts, nsys times of a category the workload never enters) and stay valid.
pub fn is_kernel_duration(metric: &str) -> bool {
    metric.split('.').next() == Some("gpu__time_duration") && !metric.ends_with(".per_second")
}

/// Lower-case hex of `bytes` (digests in file names, keys and hashes): the crate's one hex
/// encoder. Hand-written: two lines, and no crate in the tree already provides it.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(2 * bytes.len()), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// How a fraction is printed as a percentage (`0.031` -> `+3.1%`). One formatter for every
/// report and message, so the same number reads the same everywhere; each style is the precision
/// one kind of number has always been printed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Percent {
    /// `3.1%`: unsigned, one decimal (thresholds and noise floors in calibration).
    Plain1,
    /// `3.14%`: unsigned, two decimals.
    Plain2,
    /// `+3.14%`: signed, two decimals (changes in verdict reasons and change-point reports).
    Signed2,
    /// `+3.1%`, or `+0.42%` under 1%, so that a 0.4% drift does not print as 0.4 or 0.0; `n/a`
    /// for a change that is not finite (the change column of the run reports).
    Change,
    /// `+12%` at 10% and above, `+5.9%` below; `from 0` for an infinite change, which is a
    /// counter that was zero in the baseline (the explanatory counters).
    Counter,
}

/// `fraction` (`0.031` = 3.1%) as a percentage in `style`.
pub fn percent(fraction: f64, style: Percent) -> String {
    let p = fraction * 100.0;
    match style {
        Percent::Plain1 => format!("{p:.1}%"),
        Percent::Plain2 => format!("{p:.2}%"),
        Percent::Signed2 => format!("{p:+.2}%"),
        Percent::Change if !fraction.is_finite() => "n/a".to_owned(),
        Percent::Change if p.abs() < 1.0 => format!("{p:+.2}%"),
        Percent::Change => format!("{p:+.1}%"),
        Percent::Counter if fraction.is_infinite() => "from 0".to_owned(),
        Percent::Counter if p.abs() >= 10.0 => format!("{p:+.0}%"),
        Percent::Counter => format!("{p:+.1}%"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quantity_reads_as_written_and_parses_back() {
        for (written, shown) in [
            ("1us", "1us"),
            ("1000ns", "1us"),
            ("500ns", "500ns"),
            ("1.5ms", "1.5ms"),
            ("2s", "2s"),
            ("2MB", "2MB"),
            ("512byte", "512byte"),
            ("3GB/s", "3GB/s"),
            ("7", "7"),
        ] {
            let q = Quantity::parse(written).unwrap();
            assert_eq!(q.to_string(), shown, "{written}");
            assert_eq!(Quantity::parse(shown).unwrap(), q, "{shown} parses back");
        }
    }

    #[test]
    fn time_units_of_every_era_normalise_to_ns() {
        for (u, f) in [
            ("nsecond", 1.0),
            ("ns", 1.0),
            ("usecond", 1e3),
            ("us", 1e3),
            ("msecond", 1e6),
            ("ms", 1e6),
            ("second", 1e9),
        ] {
            let n = normalise(u).unwrap();
            assert_eq!(n.base, "ns", "{u}");
            assert!((n.factor - f).abs() < f64::EPSILON * f, "{u}");
        }
    }

    #[test]
    fn byte_prefixes_scale_by_1000_not_1024() {
        assert!((normalise("Kbyte").unwrap().factor - 1000.0).abs() < 1e-9);
        assert!((normalise("Gbyte/second").unwrap().factor - 1e9).abs() < 1e-3);
        assert_eq!(normalise("Gbyte/s").unwrap().base, "byte/second");
    }

    #[test]
    fn frequencies_and_counts() {
        assert!((normalise("cycle/nsecond").unwrap().factor - 1e9).abs() < 1e-3);
        assert_eq!(normalise("Mhz").unwrap().base, "Hz");
        assert_eq!(normalise("register/thread").unwrap().base, "register/thread");
        assert_eq!(normalise("").unwrap().dimension, Dimension::Count);
        assert!(normalise("furlong").is_err());
        // Seen in 2019-era raw pages (S2).
        for u in [
            "inst/issue",
            "issue/cycle",
            "thread/inst",
            "cycle/issue",
            "byte/block",
        ] {
            assert_eq!(normalise(u).unwrap().base, u, "{u}");
        }
        let kb = normalise("Kbyte/block").unwrap();
        assert_eq!((kb.base.as_str(), kb.factor), ("byte/block", 1e3));
        assert!(normalise("Kbyte/furlong").is_err());
        assert!(normalise("furlong/thread").is_err());
    }

    #[test]
    fn rates_and_prefixes_normalise_by_rule() {
        let f = |u: &str| {
            let n = normalise(u).unwrap();
            (n.base, n.factor, n.dimension)
        };
        // Units of `--set full` and default raw exports that used to fail the whole file.
        assert_eq!(f("sector/s"), ("sector/second".into(), 1.0, Dimension::Count));
        assert_eq!(f("sector/us"), ("sector/second".into(), 1e6, Dimension::Count));
        assert_eq!(f("sector/ns"), ("sector/second".into(), 1e9, Dimension::Count));
        assert_eq!(f("sector/ms"), ("sector/second".into(), 1e3, Dimension::Count));
        assert_eq!(f("Ginst/second"), ("inst/second".into(), 1e9, Dimension::Count));
        assert_eq!(f("Tbyte/s"), ("byte/second".into(), 1e12, Dimension::Throughput));
        assert_eq!(f("Kbyte/us"), ("byte/second".into(), 1e9, Dimension::Throughput));
        assert_eq!(f("cycle/ms"), ("Hz".into(), 1e3, Dimension::Frequency));
        assert_eq!(f("Pbyte"), ("byte".into(), 1e15, Dimension::Bytes));
        assert_eq!(f("%/register"), ("%/register".into(), 1.0, Dimension::Percent));
        assert_eq!(f("%/Kbyte"), ("%/Kbyte".into(), 1.0, Dimension::Percent));
        for u in ["sample", "branches", "inst", "sectors"] {
            assert_eq!(f(u), (u.into(), 1.0, Dimension::Count), "{u}");
        }
        // The base units stay as they are: normalising a normalised unit changes nothing.
        for u in [
            "ns",
            "byte",
            "Hz",
            "byte/second",
            "%",
            "sector/second",
            "inst/second",
        ] {
            let n = normalise(u).unwrap();
            assert_eq!((n.base.as_str(), n.factor), (u, 1.0), "{u}");
        }
        assert!(normalise("furlong/s").is_err());
        let kept = normalise_or_keep("furlong");
        assert_eq!((kept.base.as_str(), kept.factor), ("furlong", 1.0));
        assert!(!kept.is_known());
        assert!(normalise_or_keep("ns").is_known());
    }

    #[test]
    fn quantities_parse_with_units() {
        assert_eq!(
            Quantity::parse("500ns").unwrap(),
            Quantity {
                value: 500.0,
                unit: "ns".into()
            }
        );
        assert_eq!(
            Quantity::parse("1.5 us").unwrap(),
            Quantity {
                value: 1500.0,
                unit: "ns".into()
            }
        );
        assert!((Quantity::parse("2MB").unwrap().value - 2e6).abs() < 1e-6);
        assert_eq!(Quantity::parse("12").unwrap().unit, "");
        assert!(Quantity::parse("fast").is_err());
        assert!(Quantity::parse("5 parsecs").is_err());
    }

    #[test]
    fn human_formatting_picks_readable_scale() {
        assert_eq!(human(406_240.0, "ns"), "406.2 us");
        assert_eq!(human(1.5e9, "byte/second"), "1.500 GB/s");
        assert_eq!(human(52.13, "%"), "52.13 %");
        assert_eq!(human(32.0, "register/thread"), "32 register/thread");
        assert!(is_kernel_duration("gpu__time_duration.sum"));
        assert!(is_kernel_duration("gpu__time_duration.max"));
        assert!(!is_kernel_duration("gpu__time_duration.sum.per_second"));
        assert!(!is_kernel_duration(
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"
        ));
    }

    #[test]
    fn percent_styles_keep_their_precision() {
        assert_eq!(percent(0.0314, Percent::Plain1), "3.1%");
        assert_eq!(percent(0.0314, Percent::Plain2), "3.14%");
        assert_eq!(percent(0.0314, Percent::Signed2), "+3.14%");
        assert_eq!(percent(-0.0314, Percent::Signed2), "-3.14%");
        assert_eq!(percent(0.0314, Percent::Change), "+3.1%");
        assert_eq!(percent(0.0042, Percent::Change), "+0.42%");
        assert_eq!(percent(f64::NAN, Percent::Change), "n/a");
        assert_eq!(percent(f64::INFINITY, Percent::Change), "n/a");
        assert_eq!(percent(0.123, Percent::Counter), "+12%");
        assert_eq!(percent(-0.059, Percent::Counter), "-5.9%");
        assert_eq!(percent(f64::INFINITY, Percent::Counter), "from 0");
    }
}
