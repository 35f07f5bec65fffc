//! From spec to work: argv templates filled per size, and the list of ncu metrics a target needs.

use crate::spec::{DERIVED_PREFIX, Size, Target};

/// Fill `{param}` placeholders from a size. `{{` and `}}` are literal braces.
///
/// # Errors
/// The placeholder that has no value in this size, or an unclosed brace.
pub fn fill(template: &str, size: &Size) -> Result<String, String> {
    let mut out = String::with_capacity(template.len());
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let mut name = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(ch) => name.push(ch),
                        None => return Err(format!("unclosed `{{` in `{template}`")),
                    }
                }
                match size.get(&name) {
                    Some(v) => out.push_str(v),
                    None => {
                        return Err(format!(
                            "placeholder `{{{name}}}` has no value in size `{}`",
                            size.key()
                        ));
                    }
                }
            }
            other => out.push(other),
        }
    }
    Ok(out)
}

/// The application argv for one size.
///
/// # Errors
/// As [`fill`].
pub fn app_argv(target: &Target, size: &Size) -> Result<Vec<String>, String> {
    target.command.iter().map(|a| fill(a, size)).collect()
}

/// Duration is needed by every derived metric.
pub const DURATION_METRIC: &str = "gpu__time_duration.sum";

/// The ncu metrics to collect for a target: the spec's metrics (derived ones excluded), plus the
/// duration when a derived metric needs it. Sorted and deduplicated so argv is stable.
pub fn ncu_metrics(target: &Target) -> Vec<String> {
    let mut m: Vec<String> = target
        .metrics
        .iter()
        .filter(|m| !m.name.starts_with(DERIVED_PREFIX))
        .map(|m| m.name.clone())
        .collect();
    if target.metrics.iter().any(|m| m.name.starts_with(DERIVED_PREFIX)) {
        m.push(DURATION_METRIC.to_owned());
    }
    m.sort();
    m.dedup();
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(p: &[(&str, &str)]) -> Size {
        Size {
            params: p
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        }
    }

    #[test]
    fn placeholders_are_filled_and_braces_escaped() {
        let s = size(&[("n", "4096"), ("m", "8")]);
        assert_eq!(fill("--n={n}", &s).unwrap(), "--n=4096");
        assert_eq!(fill("{m}x{n}", &s).unwrap(), "8x4096");
        assert_eq!(fill("{{literal}}", &s).unwrap(), "{literal}");
        assert!(
            fill("{k}", &s)
                .unwrap_err()
                .contains("`{k}` has no value in size `n=4096,m=8`")
        );
        assert!(fill("{n", &s).is_err());
    }
}
