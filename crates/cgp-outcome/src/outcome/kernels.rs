//! Which kernels a run's rows show gone and which new: a rename shows as one of each. Read by
//! `outcome::apply_missing` (to name a missing kernel's likely new name) and by the reporters.

use crate::outcome::results::{Row, RowVerdict};

/// A (target, kernel) pair.
pub(crate) type TargetKernel = (String, String);

/// Kernels that disappeared (every row of the target x kernel is `missing`) and kernels that
/// appeared (every row is `new`), as (target, kernel) pairs, sorted. For reports: a rename shows
/// as one of each.
pub(crate) fn kernel_changes(rows: &[Row]) -> (Vec<TargetKernel>, Vec<TargetKernel>) {
    use std::collections::BTreeMap;
    // Per target x kernel: (any row missing, any row measured with a baseline, any row measured).
    let mut groups: BTreeMap<(&str, &str), (bool, bool, bool)> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.verdict() != RowVerdict::Error) {
        // A row of no kernel has no kernel to appear or disappear.
        let Some(kernel) = r.key.kernel_name() else {
            continue;
        };
        let g = groups.entry((r.key.target.as_str(), kernel)).or_default();
        if r.verdict() == RowVerdict::Missing {
            g.0 = true;
        } else {
            g.2 = true;
            g.1 |= r.sides.baseline.is_some();
        }
    }
    let pick = |f: &dyn Fn(&(bool, bool, bool)) -> bool| -> Vec<TargetKernel> {
        groups
            .iter()
            .filter(|(_, g)| f(g))
            .map(|((t, k), _)| ((*t).to_owned(), (*k).to_owned()))
            .collect()
    };
    (pick(&|g| g.0 && !g.2), pick(&|g| g.2 && !g.0 && !g.1))
}
