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
    Percent,
    /// A count or ratio with its own unit name (`inst`, `cycle`, `register/thread`, ...), or none.
    Count,
}

/// A unit, once normalised: the base unit's name and the factor from the printed unit to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Normalised {
    /// Name of the base unit the value is expressed in after scaling (`ns`, `byte`, `Hz`, ...).
    pub base: String,
    /// Multiply a printed value by this to get base units.
    pub factor: f64,
    pub dimension: Dimension,
}

/// Error for a unit that is not in the table. The caller adds the metric and file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown unit `{0}`")]
pub struct UnknownUnit(pub String);

/// Count-like units seen in ncu output that need no scaling. Compound forms (`register/thread`,
/// `warp/cycle`, `byte/block`) are accepted when each part is a known count or byte unit.
const COUNT_UNITS: &[&str] = &[
    "inst",
    "cycle",
    "sector",
    "request",
    "warp",
    "block",
    "thread",
    "SM",
    "cluster",
    "register",
    "wavefront",
    "instance",
    "pass",
    "launch",
    "ctas",
    "cta",
    "inst/warp",
    "kernel",
    "issue",
    "msecond/cycle",
    "ratio",
    "",
];

/// Normalise a unit as printed by ncu.
///
/// # Errors
/// [`UnknownUnit`] when the spelling is not one ncu is known to print.
pub fn normalise(unit: &str) -> Result<Normalised, UnknownUnit> {
    let u = unit.trim();
    let n = |base: &str, factor: f64, dimension| Normalised {
        base: base.to_owned(),
        factor,
        dimension,
    };
    // `--print-units auto` scales the byte part of per-block sizes (`Kbyte/block`).
    if let Some((factor, per)) = prefixed_bytes_per_count(u) {
        return Ok(n(&format!("byte/{per}"), factor, Dimension::Count));
    }
    let r = match u {
        "nsecond" | "ns" => n("ns", 1.0, Dimension::Time),
        "usecond" | "us" => n("ns", 1e3, Dimension::Time),
        "msecond" | "ms" => n("ns", 1e6, Dimension::Time),
        "second" | "s" => n("ns", 1e9, Dimension::Time),
        "byte" | "B" => n("byte", 1.0, Dimension::Bytes),
        "Kbyte" | "KB" => n("byte", 1e3, Dimension::Bytes),
        "Mbyte" | "MB" => n("byte", 1e6, Dimension::Bytes),
        "Gbyte" | "GB" => n("byte", 1e9, Dimension::Bytes),
        "Tbyte" | "TB" => n("byte", 1e12, Dimension::Bytes),
        "cycle/second" | "hz" | "Hz" => n("Hz", 1.0, Dimension::Frequency),
        "cycle/usecond" | "cycle/us" => n("Hz", 1e6, Dimension::Frequency),
        "cycle/nsecond" | "cycle/ns" => n("Hz", 1e9, Dimension::Frequency),
        "Khz" | "KHz" | "khz" => n("Hz", 1e3, Dimension::Frequency),
        "Mhz" | "MHz" | "mhz" => n("Hz", 1e6, Dimension::Frequency),
        "Ghz" | "GHz" | "ghz" => n("Hz", 1e9, Dimension::Frequency),
        "byte/second" | "byte/s" | "B/s" => n("byte/second", 1.0, Dimension::Throughput),
        "Kbyte/second" | "Kbyte/s" | "KB/s" => n("byte/second", 1e3, Dimension::Throughput),
        "Mbyte/second" | "Mbyte/s" | "MB/s" => n("byte/second", 1e6, Dimension::Throughput),
        "Gbyte/second" | "Gbyte/s" | "GB/s" => n("byte/second", 1e9, Dimension::Throughput),
        "Tbyte/second" | "Tbyte/s" | "TB/s" => n("byte/second", 1e12, Dimension::Throughput),
        "%" | "pct" => n("%", 1.0, Dimension::Percent),
        other if is_count_unit(other) => n(other, 1.0, Dimension::Count),
        other => return Err(UnknownUnit(other.to_owned())),
    };
    Ok(r)
}

fn is_count_unit(u: &str) -> bool {
    if COUNT_UNITS.contains(&u) {
        return true;
    }
    // Compound units such as `register/thread`, `warp/cycle`, `byte/block`, `inst/cycle`.
    let mut parts = u.split('/');
    let ok = |p: &str| COUNT_UNITS.contains(&p) || matches!(p, "byte" | "second" | "nsecond");
    match (parts.next(), parts.next(), parts.next()) {
        (Some(a), Some(b), None) => !a.is_empty() && !b.is_empty() && ok(a) && ok(b),
        _ => false,
    }
}

/// `Kbyte/block` -> (1000, `block`): a scaled byte count per count unit.
fn prefixed_bytes_per_count(u: &str) -> Option<(f64, &str)> {
    let (bytes, per) = u.split_once('/')?;
    let factor = match bytes {
        "Kbyte" => 1e3,
        "Mbyte" => 1e6,
        "Gbyte" => 1e9,
        _ => return None,
    };
    (COUNT_UNITS.contains(&per) && !per.is_empty()).then_some((factor, per))
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

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", crate::units::format_number(self.value), self.unit)
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

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
