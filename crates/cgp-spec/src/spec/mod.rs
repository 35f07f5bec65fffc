//! The `cgp-gate.yaml` spec: loading, validation and the JSON Schema.
//!
//! - `yaml`: the YAML tree with line and column on every node (saphyr-parser).
//! - `decode`: typed access to that tree with precise errors.
//! - `load`: the spec's keys, defaults and cross-field checks -> [`Spec`].
//! - `threshold`: metric names and thresholds. `template`: `{param}` placeholders.
//! - `expr`: `flops:`/`bytes:` expressions. `schema`: the JSON Schema.

mod categories;
mod decode;
mod error;
mod expr;
mod kinds;
mod load;
pub mod model;
mod schema;
mod template;
mod threshold;
mod yaml;

pub use categories::{
    CategoryRule, CategoryRules, DEFAULT_CATEGORY_RULES, NSYS_METRICS_HELP, NsysMetric, categories_from_str,
    category_metric, category_names, category_of, instances_of, is_nsys_metric_name, load_categories,
    parse_nsys_metric,
};
pub use error::SpecError;
pub use expr::{Expr, evaluate};
pub use load::{load, load_str, parse_duration};
pub use model::*;
pub use schema::json_schema;
pub use template::{render, render_command};
pub use threshold::{FRACTION_BELOW, KNOWN_METRICS, nearest_known_metrics};
