//! Readers of what version 1 wrote as strings.

use super::{Deserialize, Deserializer, Direction, FingerprintDiff, RowThreshold, ThresholdKind};
use crate::foundation::units::Quantity;

// `serde(untagged)`, against the rule of docs/spec.md ("Why not serde"), on purpose: only a reader
// of two forms a cgp-gate wrote (never a user's hand-written file), each unambiguous (an array or
// a map), and the results reader names the file, line and column of a value that is neither.
#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum FingerprintDiffRepr {
    /// Version 1: `[field, baseline, now]`.
    Triple([String; 3]),
    Named {
        field: String,
        baseline: String,
        current: String,
    },
}

impl From<FingerprintDiffRepr> for FingerprintDiff {
    fn from(r: FingerprintDiffRepr) -> Self {
        match r {
            FingerprintDiffRepr::Triple([field, baseline, current])
            | FingerprintDiffRepr::Named {
                field,
                baseline,
                current,
            } => Self {
                field,
                baseline,
                current,
            },
        }
    }
}

// `serde(untagged)` as above: version 1's string or version 2's map.
#[derive(Deserialize)]
#[serde(untagged)]
enum ThresholdRepr {
    Text(String),
    Typed(RowThreshold),
}

pub(super) fn threshold<'de, D: Deserializer<'de>>(d: D) -> Result<Option<RowThreshold>, D::Error> {
    Ok(match Option::<ThresholdRepr>::deserialize(d)? {
        None => None,
        Some(ThresholdRepr::Typed(t)) => Some(t),
        Some(ThresholdRepr::Text(s)) => parse_threshold(&s),
    })
}

/// Version 1's display string: `3% (lower is better, min effect 500ns)`, `exact (...)`,
/// `min 5 (...)`, `max 5 (...)`, or `-`.
pub(super) fn parse_threshold(s: &str) -> Option<RowThreshold> {
    let (rule, rest) = s.split_once(" (").unwrap_or((s, ""));
    let rule = rule.trim();
    let kind = if rule == "exact" {
        ThresholdKind::Exact
    } else if let Some(v) = rule.strip_prefix("min ") {
        ThresholdKind::Min {
            value: v.trim().parse().ok()?,
        }
    } else if let Some(v) = rule.strip_prefix("max ") {
        ThresholdKind::Max {
            value: v.trim().parse().ok()?,
        }
    } else {
        let pct: f64 = rule.strip_suffix('%')?.trim().parse().ok()?;
        ThresholdKind::Relative {
            fraction: pct / 100.0,
        }
    };
    let min_effect = rest
        .trim_end_matches(')')
        .split(", ")
        .find_map(|p| p.strip_prefix("min effect "))
        .and_then(|q| Quantity::parse(q).ok());
    Some(RowThreshold {
        kind,
        min_effect,
        bound: None,
    })
}

pub(super) fn direction<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Direction>, D::Error> {
    Ok(match Option::<String>::deserialize(d)?.as_deref() {
        Some("lower") => Some(Direction::Lower),
        Some("higher") => Some(Direction::Higher),
        _ => None,
    })
}
