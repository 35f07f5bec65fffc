//! Reporters name no results row (issue 62): the rule [`reporters_name_no_row`], read as Rust
//! tokens, with the allowances of members of the same name on reporters' own types.

use std::collections::BTreeSet;
use std::path::Path;

use proc_macro2::{TokenStream, TokenTree};

use super::{is_test_file, parse, punct, ranges};
use crate::architecture::sources;

/// What a reporter may not name (issue 62): a results row and its raw parts, which
/// `outcome::view::RowView` keeps from it (the rule, its threshold and tolerance, the statistics'
/// estimate with its raw interval). The compiler refuses them on a `RowView`; this catches a
/// reporter that takes a `Row` (or `Results::rows`) again.
const ROW_TYPES: &[&str] = &["Row", "RowRule", "RowThreshold", "Estimate", "Bound"];

/// Fields and methods of those types a reporter may not name (a threshold's `bound` is reached
/// through `.threshold`; a roofline point's `bound` is another word).
const ROW_MEMBERS: &[&str] = &[
    "estimate",
    "rule",
    "threshold",
    "tolerance",
    "change_ci",
    "median_ci",
];

/// Members of the list above that a reporter names on a type of its own, not a row's: (file of
/// `report/`, member, why). Each must still be named there (an allowance that matches nothing
/// is found).
pub const REPORTER_MEMBERS_THAT_ARE_NOT: &[(&str, &str, &str)] = &[
    (
        "report/bisect.rs",
        "change_ci",
        "a bisect step's interval of a commit's change (outcome::bisect), decided by bisect",
    ),
    (
        "report/calibrate.rs",
        "threshold",
        "a calibration row's rule as the spec wrote it, as text, beside the thresholds calibrate suggests",
    ),
];

/// The lines of `tokens` that name a [`ROW_TYPES`] type (in a path, a type, a pattern, a `use`)
/// or a [`ROW_MEMBERS`] member (`.rule`, `.estimate()`, also inside a macro's arguments), with
/// what they name.
fn names_of_rows(tokens: TokenStream, out: &mut Vec<(usize, String)>) {
    let t: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, tt) in t.iter().enumerate() {
        match tt {
            TokenTree::Ident(id) => {
                let name = id.to_string();
                let member = i >= 1 && punct(t.get(i - 1), '.').is_some();
                if ROW_TYPES.contains(&name.as_str()) {
                    out.push((id.span().start().line, name));
                } else if member && ROW_MEMBERS.contains(&name.as_str()) {
                    out.push((id.span().start().line, format!(".{name}")));
                }
            }
            TokenTree::Group(g) => names_of_rows(g.stream(), out),
            _ => {}
        }
    }
}

/// Reporters (`report/` of cgp-report) render a decided view (`outcome::view::RunView`,
/// `RowView`), never a results row: they name no [`ROW_TYPES`] and no [`ROW_MEMBERS`] (the
/// review's plant: Markdown saying "slower than allowed" when `r.estimate().change_ci()` lies
/// beyond `r.rule.threshold`'s tolerance, with no gate word). Test items may.
pub fn reporters_name_no_row(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut excused = BTreeSet::new();
    for (krate, rel, file) in sources(root) {
        if krate != "cgp-report" || !rel.starts_with("report/") || is_test_file(&rel) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let Some(f) = parse(krate, &rel, &text, &mut out) else {
            continue;
        };
        let (mut fns, mut tests) = (Vec::new(), Vec::new());
        ranges(&f.items, &mut fns, &mut tests);
        let mut found = Vec::new();
        names_of_rows(text.parse().unwrap(), &mut found);
        for (line, name) in found {
            if tests.iter().any(|(a, b)| (*a..=*b).contains(&line)) {
                continue;
            }
            if let Some(e) = REPORTER_MEMBERS_THAT_ARE_NOT
                .iter()
                .find(|e| e.0 == rel && name.strip_prefix('.') == Some(e.1))
            {
                excused.insert(e.0.to_owned() + e.1);
                continue;
            }
            out.push(format!(
                "{krate}: src/{rel}:{line}: a reporter names `{name}`: it renders the decided view (outcome::view::RowView: the numbers to show, no rule, threshold or tolerance), not a results row"
            ));
        }
    }
    for e in REPORTER_MEMBERS_THAT_ARE_NOT {
        if !excused.contains(&(e.0.to_owned() + e.1)) {
            out.push(format!(
                "cgp-report: REPORTER_MEMBERS_THAT_ARE_NOT names `.{}` in src/{}, which names it no more: remove the line",
                e.1, e.0
            ));
        }
    }
    out
}

#[test]
fn reporters_name_no_results_row_rule_or_threshold() {
    let found = reporters_name_no_row(&crate::architecture::repo());
    assert!(found.is_empty(), "reporters render the decided view: {found:#?}");
}
