//! How a row's threshold is written: flat, as the internally tagged `ThresholdKind` was.

/// A row's threshold as the file holds it: the rule's `kind` and its number (`fraction` or
/// `value`) beside the other fields, the bytes `serde(flatten)` of the internally tagged
/// `ThresholdKind` wrote, read and written without it.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct ThresholdRepr {
    kind: Rule,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fraction: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    min_effect: Option<crate::foundation::units::Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tolerance: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    limit: Option<f64>,
}

#[derive(Clone, Copy, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
enum Rule {
    Relative,
    Exact,
    Min,
    Max,
}

impl From<super::RowThreshold> for ThresholdRepr {
    fn from(t: super::RowThreshold) -> Self {
        use crate::foundation::threshold::ThresholdKind as K;
        let (kind, fraction, value) = match t.kind {
            K::Relative { fraction } => (Rule::Relative, Some(fraction), None),
            K::Exact => (Rule::Exact, None, None),
            K::Min { value } => (Rule::Min, None, Some(value)),
            K::Max { value } => (Rule::Max, None, Some(value)),
        };
        Self {
            kind,
            fraction,
            value,
            min_effect: t.min_effect,
            tolerance: t.bound.and_then(super::Bound::tolerance),
            limit: t.bound.and_then(super::Bound::limit),
        }
    }
}

impl TryFrom<ThresholdRepr> for super::RowThreshold {
    type Error = &'static str;

    fn try_from(r: ThresholdRepr) -> Result<Self, Self::Error> {
        use crate::foundation::threshold::ThresholdKind as K;
        let kind = match (r.kind, r.fraction, r.value) {
            (Rule::Relative, Some(fraction), _) => K::Relative { fraction },
            (Rule::Relative, None, _) => return Err("missing field `fraction`"),
            (Rule::Exact, ..) => K::Exact,
            (Rule::Min, _, Some(value)) => K::Min { value },
            (Rule::Max, _, Some(value)) => K::Max { value },
            (Rule::Min | Rule::Max, _, None) => return Err("missing field `value`"),
        };
        Ok(Self {
            kind,
            min_effect: r.min_effect,
            bound: bound(r.tolerance, r.limit),
        })
    }
}

/// The bound of the flat numbers the file holds: a tolerance with its limit, a limit alone, or
/// nothing (every pair of the two fields reads back as it was written).
fn bound(tolerance: Option<f64>, limit: Option<f64>) -> Option<super::Bound> {
    match (tolerance, limit) {
        (Some(tolerance), limit) => Some(super::Bound::Tolerance { tolerance, limit }),
        (None, Some(l)) => Some(super::Bound::Limit(l)),
        (None, None) => None,
    }
}
