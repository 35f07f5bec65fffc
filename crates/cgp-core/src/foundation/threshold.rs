//! How a metric is judged: direction, rule and `min_effect`. A leaf module (it imports only
//! `units`) so that the spec, the statistics and the results share one type.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::foundation::units::{Quantity, format_number};

/// Whether a smaller or a larger value is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Durations, bytes, cycles, instructions, registers.
    Lower,
    /// Throughputs (`*.per_second`) and utilisation (`*.pct_of_peak*`).
    Higher,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Lower => "lower",
            Self::Higher => "higher",
        }
    }

    /// `lower`, `higher`, or `-` for none: how files and reports write a direction that may be
    /// absent.
    pub fn label(direction: Option<Self>) -> &'static str {
        direction.map_or("-", Self::as_str)
    }
}

/// The one serializer of an optional [`Direction`] (serde's `serialize_with`): [`Direction::label`].
///
/// # Errors
/// The serializer's.
pub fn write_direction_or_dash<S: serde::Serializer>(d: &Option<Direction>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(Direction::label(*d))
}

/// The rule a metric is judged by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ThresholdKind {
    /// `"3%"`: a change worse than this fraction (0.03) is a regression.
    Relative { fraction: f64 },
    /// `exact`: any change is a regression (deterministic counters).
    Exact,
    /// `{min: X}`: the candidate's median must be at least X (base units).
    Min { value: f64 },
    /// `{max: X}`: the candidate's median must be at most X (base units).
    Max { value: f64 },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Threshold {
    pub kind: ThresholdKind,
    pub direction: Direction,
    /// Changes smaller than this absolute amount are never a regression or an improvement.
    pub min_effect: Option<Quantity>,
}

impl Threshold {
    /// The rule alone: `3%`, `exact`, `min 5`, `max 5`.
    pub fn rule(&self) -> String {
        match &self.kind {
            ThresholdKind::Relative { fraction } => format!("{}%", format_number(fraction * 100.0)),
            ThresholdKind::Exact => "exact".to_owned(),
            ThresholdKind::Min { value } => format!("min {}", format_number(*value)),
            ThresholdKind::Max { value } => format!("max {}", format_number(*value)),
        }
    }
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.rule())?;
        write!(f, " ({} is better", self.direction.as_str())?;
        if let Some(m) = &self.min_effect {
            write!(f, ", min effect {m}")?;
        }
        f.write_str(")")
    }
}
