//! Plain-text tables for the terminal.

use crate::samples::{Launch, MetricValue};
use crate::units::human;

/// A table of launches: one block per launch, a line per metric.
pub fn launches_table(launches: &[Launch]) -> String {
    let mut out = String::new();
    for l in launches {
        out.push_str(&format!("#{} {}\n", l.id, l.kernel));
        let width = l.metrics.keys().map(String::len).max().unwrap_or(0);
        for (name, m) in &l.metrics {
            let v = match &m.value {
                MetricValue::Number(x) => human(*x, &m.unit),
                MetricValue::List(xs) => format!(
                    "[{} values] {}",
                    xs.len(),
                    xs.first().map_or(String::new(), |x| human(*x, &m.unit))
                ),
                MetricValue::Text(t) => t.clone(),
            };
            out.push_str(&format!("  {name:<width$}  {v}\n"));
        }
    }
    if launches.is_empty() {
        out.push_str("no launches\n");
    }
    out
}
