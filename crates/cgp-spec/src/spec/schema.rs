//! The JSON Schema (draft-07) of `cgp-gate.yaml`, for yaml-language-server and other editors.
//!
//! Hand-written so that descriptions read well in an editor's hover text. It checks shapes;
//! `cgp-gate validate` checks everything (placeholders against sizes, regexes, metric names).
//! Draft-07 because it is the draft editors support best.

use serde_json::{Value, json};

use super::load::{
    DEFAULT_BASELINE_REPETITIONS, DEFAULT_HARNESS_WARMUP, DEFAULT_REPETITIONS, DEFAULT_TIMEOUT,
    DEFAULT_WARMUP, MAX_REPETITIONS,
};
use super::model::DERIVED_METRICS;

/// The JSON Schema of the spec.
pub fn json_schema() -> Value {
    let target_properties = target_properties();
    let mut defaults_properties = target_properties.clone();
    if let Some(map) = defaults_properties.as_object_mut() {
        map.remove("name");
    }
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "cgp-gate spec",
        "description": "Which GPU kernels cgp-gate profiles with Nsight Compute, and how each metric is judged.",
        "type": "object",
        "additionalProperties": false,
        "required": ["version", "targets"],
        "properties": {
            "version": {
                "description": "Spec schema version. Only 1 exists.",
                "const": 1
            },
            "settings": settings_schema(),
            "defaults": {
                "description": "Values for every target's keys (except `name`); a target's own key replaces the default whole.",
                "type": "object",
                "additionalProperties": false,
                "properties": defaults_properties
            },
            "targets": {
                "description": "The benchmark programs and what to measure in them.",
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["name"],
                    "properties": target_properties,
                    "allOf": other_profilers_keys()
                }
            }
        },
        "definitions": definitions()
    })
}

/// `settings:`, the run-wide settings, with their defaults in the descriptions.
fn settings_schema() -> Value {
    let d = super::model::Settings::default();
    json!({
        "description": "Run-wide settings.",
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "alpha": {
                "description": format!("Run-wide false-alarm rate, controlled over all judged rows (Holm). Default {}.", d.alpha),
                "type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1
            },
            "confidence": {
                "description": format!("Confidence level of the intervals shown. Default {}.", d.confidence),
                "type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1
            },
            "history": {
                "description": format!("Baseline generations kept per metric for trends. Default {}.", d.history),
                "type": "integer", "minimum": 1
            },
            "fingerprint_fields": {
                "description": "Fingerprint fields that must match for a baseline to be compared.",
                "type": "array",
                "items": { "enum": fingerprint_fields() }
            },
            "min_clock_fraction": {
                "description": format!("A repetition whose SM clock fell under this fraction of the locked clock is re-run. Default {}.", d.min_clock_fraction),
                "type": "number", "exclusiveMinimum": 0, "maximum": 1
            },
            "max_throttle_reruns": {
                "description": format!("How many times a throttled repetition is re-run before it is kept and marked. Default {}.", d.max_throttle_reruns),
                "type": "integer", "minimum": 0
            },
            "job_spread": {
                "description": "The between-job spread assumed before the baseline history says more (what `cgp-gate calibrate --baselines` measures). Default 0.3%, fitted to real H100 jobs.",
                "type": "string", "pattern": "^\\s*[0-9]+(\\.[0-9]+)?\\s*%\\s*$"
            },
            "job_spread_df": {
                "description": "The degrees of freedom of the evidence behind `job_spread` (what `cgp-gate calibrate --baselines` prints with it). Default 3: the six job differences of two job pairs the default is fitted to, a pair's three counted as 1.5 (docs/statistics.md 2.3).",
                "type": "number", "minimum": 1, "maximum": 1000
            },
            "build": {
                "description": "The shell command `cgp-gate bisect` and `cgp-gate check --base` run in a commit's worktree (in the spec's folder there) before measuring it; a bisect commit whose build fails is skipped, never taken as good or bad; a base that does not build fails `check --base` (exit 3).",
                "type": "string", "minLength": 1
            },
            "confirm": {
                "description": "Which rows `cgp-gate check --base` measures again, paired with the base commit's build in the same job: `doubtful` (default: inconclusive rows and regressions) or `all`. `--confirm` replaces it.",
                "enum": ["doubtful", "all"]
            },
            "store": {
                "description": "The results store (docs/store.md): `sqlite:PATH` or `postgres://USER@HOST:PORT/DB`, without a password (set PGPASSWORD, or give the whole URL in CGP_GATE_STORE). `--store` and CGP_GATE_STORE replace it.",
                "type": "string", "pattern": "^(sqlite:.+|postgres(ql)?://.+)$"
            }
        }
    })
}

/// The definitions the target keys refer to: a quantity, a direction, a threshold.
fn definitions() -> Value {
    json!({
        "quantity": {
            "description": "A number in the metric's base unit, or a quantity such as \"500ns\", \"2MB\", \"1.5GB/s\", \"5%\".",
            "type": ["number", "string"]
        },
        "direction": {
            "description": "Whether lower or higher values are better. Defaults from the metric name.",
            "enum": ["lower", "higher"]
        },
        "threshold": {
            "description": "\"3%\" (relative change), exact, {min: X}, {max: X}, or {relative|exact|min|max, direction, min_effect}.",
            "anyOf": [
                { "type": "string", "pattern": "^\\s*[0-9]*\\.?[0-9]+([eE][-+]?[0-9]+)?\\s*%\\s*$" },
                { "const": "exact" },
                rule_object("relative", json!({ "type": "string", "pattern": "%\\s*$" })),
                rule_object("exact", json!({ "const": true })),
                rule_object("min", json!({ "$ref": "#/definitions/quantity" })),
                rule_object("max", json!({ "$ref": "#/definitions/quantity" }))
            ]
        }
    })
}

/// A target that names its profiler cannot have the other profiler's keys (`validate` says why
/// and what to do; a key from `defaults:` is for the targets that read it, so only the target's
/// own keys are constrained here).
fn other_profilers_keys() -> Value {
    use crate::spec::ProfilerKind;
    let any_of =
        |keys: &[&str]| -> Value { Value::Array(keys.iter().map(|k| json!({ "required": [k] })).collect()) };
    let rule = |kind: ProfilerKind| {
        let mut then = json!({ "not": { "anyOf": any_of(&super::kinds::unread_keys(kind)) } });
        if !kind.is_nsight_compute() {
            then["properties"] = json!({ "clocks": { "not": { "const": "ncu" } } });
        }
        json!({
            "if": { "required": ["profiler"], "properties": { "profiler": { "const": kind.as_str() } } },
            "then": then
        })
    };
    Value::Array(ProfilerKind::ALL.into_iter().map(rule).collect())
}

/// A threshold mapping with exactly the one rule `rule`.
fn rule_object(rule: &str, value: Value) -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": [rule],
        "properties": {
            rule: value,
            "direction": { "$ref": "#/definitions/direction" },
            "min_effect": { "$ref": "#/definitions/quantity" }
        }
    })
}

fn fingerprint_fields() -> Vec<String> {
    crate::gpu::fingerprint::Fingerprint::default()
        .fields()
        .keys()
        .map(|k| (*k).to_owned())
        .collect()
}

fn target_properties() -> Value {
    let mut props = target_run_properties();
    if let (Value::Object(all), Value::Object(more)) = (&mut props, target_measure_properties()) {
        all.extend(more);
    }
    props
}

/// The keys of a target that say what runs: its name, command, environment, kernel filter and
/// sizes.
fn target_run_properties() -> Value {
    let scalar = json!({ "type": ["string", "number", "boolean"] });
    let size_map = json!({
        "type": "object",
        "minProperties": 1,
        "propertyNames": { "pattern": "^[A-Za-z_][A-Za-z0-9_]*$" },
        "additionalProperties": scalar
    });
    json!({
        "name": {
            "description": "Unique target name (letters, digits, `_`, `-`, `.`); used in file names.",
            "type": "string",
            "pattern": "^[A-Za-z0-9_-][A-Za-z0-9_.-]*$"
        },
        "command": {
            "description": "The program and its arguments (argv, no shell). `{param}` is filled from each size; `{{` and `}}` are literal braces.",
            "type": "array",
            "minItems": 1,
            "items": scalar
        },
        "cwd": {
            "description": "Working directory, relative to the spec file's directory.",
            "type": "string", "minLength": 1
        },
        "env": {
            "description": "Environment variables added for the program.",
            "type": "object",
            "propertyNames": { "pattern": "^[A-Za-z_][A-Za-z0-9_]*$" },
            "additionalProperties": scalar
        },
        "env_passthrough": {
            "description": "Variables of cgp-gate's environment passed to the program although they look like credentials (every `*_TOKEN`, `*_SECRET`, `*_PASSWORD`, `*_API_KEY` and the CI systems' own credentials are removed otherwise).",
            "anyOf": [
                { "type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$" },
                { "type": "array", "items": { "type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$" } }
            ]
        },
        "env_passthrough_ci_credentials": {
            "description": "The CI job's own credentials (`GITHUB_TOKEN`, `ACTIONS_RUNTIME_TOKEN`, `CI_JOB_TOKEN`, ...) that `env_passthrough` may name: without this second key such a name is a spec error.",
            "anyOf": [
                { "type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$" },
                { "type": "array", "items": { "type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$" } }
            ]
        },
        "kernel": {
            "description": "Kernel function name to profile (exact), or `regex:<expr>`.",
            "type": "string", "minLength": 1
        },
        "nvtx": {
            "description": "NVTX include expression(s) (ncu --nvtx-include; several are ORed).",
            "anyOf": [
                { "type": "string", "minLength": 1 },
                { "type": "array", "minItems": 1, "items": { "type": "string", "minLength": 1 } }
            ]
        },
        "launch_skip": {
            "description": "Matching launches to skip before profiling (ncu --launch-skip).",
            "type": "integer", "minimum": 0
        },
        "launch_count": {
            "description": "Matching launches to profile (ncu --launch-count).",
            "type": "integer", "minimum": 1
        },
        "sizes": {
            "description": "Parameter sets: a list of maps, or {matrix: {p: [..], q: [..]}} (cartesian product, last key varies fastest).",
            "anyOf": [
                { "type": "array", "minItems": 1, "items": size_map },
                {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["matrix"],
                    "properties": {
                        "matrix": {
                            "type": "object",
                            "minProperties": 1,
                            "propertyNames": { "pattern": "^[A-Za-z_][A-Za-z0-9_]*$" },
                            "additionalProperties": { "type": "array", "minItems": 1, "items": scalar }
                        }
                    }
                }
            ]
        }
    })
}

/// The keys of a target that say what is measured and how: metrics, repetitions, profiler
/// options, clocks, categories (in this order in the schema, which editors show).
fn target_measure_properties() -> Value {
    let mut props = json!({
        "metrics": {
            "description": "ncu metric name -> threshold, e.g. gpu__time_duration.sum: \"3%\". Derived: ".to_owned() + &DERIVED_METRICS.join(", "),
            "type": "object",
            "minProperties": 1,
            "propertyNames": {
                "pattern": "^(cgp__[a-z_.]+|[a-z0-9_]+__[a-z0-9_]+(\\.[a-z0-9_]+)*|gpu_time|non_gpu_time|(instances:)?(category|kernel):.+)$"
            },
            "additionalProperties": { "$ref": "#/definitions/threshold" }
        }
    });
    for more in [
        repetition_properties(),
        clock_properties(),
        profiler_properties(),
        row_properties(),
    ] {
        if let (Value::Object(all), Value::Object(more)) = (&mut props, more) {
            all.extend(more);
        }
    }
    props
}

/// How many runs a target takes, what each drops at its start, and how long one may take.
fn repetition_properties() -> Value {
    json!({
        "repetitions": {
            "description": format!("Repetitions per size (separate ncu runs) a check takes. Default {DEFAULT_REPETITIONS}. 1 is valid when the baseline holds at least 2 runs."),
            "type": "integer", "minimum": 1, "maximum": MAX_REPETITIONS
        },
        "warmup": {
            "description": format!("Launches of each kernel every run drops at its start (runs with at least 3 launches of that kernel only). Default {DEFAULT_WARMUP}; {DEFAULT_HARNESS_WARMUP} for harness targets (nvbench, gbench, pytest-benchmark), whose harness warms up itself."),
            "type": "integer", "minimum": 0
        },
        "max_repetitions": {
            "description": "Upper bound when re-measuring doubtful rows; at least `repetitions`. Default 2 x repetitions.",
            "type": "integer", "minimum": 1, "maximum": MAX_REPETITIONS
        },
        "baseline_repetitions": {
            "description": format!("Repetitions `baseline update` stores; at least `repetitions`. Default {DEFAULT_BASELINE_REPETITIONS} (or repetitions, if more)."),
            "type": "integer", "minimum": 1, "maximum": MAX_REPETITIONS
        },
        "timeout": {
            "description": format!("Wall-clock limit for one ncu run: 500ms, 120s, 5m, 1h. Default {}s.", DEFAULT_TIMEOUT.as_secs()),
            "type": "string",
            "pattern": "^\\s*[0-9]*\\.?[0-9]+\\s*(ms|s|m|h)\\s*$"
        }
    })
}

/// How ncu replays and flushes, and who locks the GPU clocks.
fn clock_properties() -> Value {
    json!({
        "clock_control": {
            "description": "ncu --clock-control. Default base; none whenever `clocks` is not ncu.",
            "enum": ["base", "none"]
        },
        "cache_control": {
            "description": "ncu --cache-control. Default all.",
            "enum": ["all", "none"]
        },
        "replay_mode": {
            "description": "ncu --replay-mode. Default kernel.",
            "enum": ["kernel", "application", "range", "app-range"]
        },
        "clocks": {
            "description": "Who locks the GPU clocks: ncu (default), nvml-base, nvml-max, none, or fixed {sm_mhz, mem_mhz}.",
            "anyOf": [
                { "enum": ["ncu", "nvml-base", "nvml-max", "none"] },
                {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["sm_mhz", "mem_mhz"],
                    "properties": {
                        "sm_mhz": { "type": "integer", "minimum": 1 },
                        "mem_mhz": { "type": "integer", "minimum": 1 }
                    }
                }
            ]
        }
    })
}

/// The work per launch (`flops`, `bytes`), the profiler, and the keys only some profilers read
/// (`libcupti`, `categories`).
fn profiler_properties() -> Value {
    json!({
        "flops": {
            "description": "Floating-point operations per launch, as an expression over size parameters (2*m*n*k).",
            "type": ["string", "number"]
        },
        "bytes": {
            "description": "Bytes moved per launch, as an expression over size parameters (4*(m*k + k*n + m*n)).",
            "type": ["string", "number"]
        },
        "profiler": {
            "description": "ncu (default): per-kernel metrics. nsys: the whole workload traced once per repetition; metrics gpu_time, non_gpu_time, category:<name>, kernel:<regex>, instances:... (docs/nsys.md). cupti: each kernel's duration and launch configuration traced at the program's own speed by cgp-gate's CUPTI injection library; metrics gpu__time_duration.sum and launch__* (docs/cupti.md). nvbench, gbench, pytest-benchmark, pytorch-rows, tritonbench, hyperfine, criterion, asv, vllm: the team's own benchmark program (or the files its CI wrote, with `cgp-gate import`), with the harness's output flags added; metrics by the harness's names (docs/harnesses.md).",
            "enum": crate::spec::ProfilerKind::ALL.map(crate::spec::ProfilerKind::as_str)
        },
        "libcupti": {
            "description": "cupti targets: the libcupti.so to load (relative to the spec); default: CGP_GATE_LIBCUPTI, then CUDA_HOME, /usr/local/cuda*, the nvidia-cuda-cupti wheel, ldconfig.",
            "type": "string",
            "minLength": 1
        },
        "categories": {
            "description": "nsys targets: kernel categories, regex -> category tried in order before the defaults; or the path of a YAML/JSON file of them; or {defaults: false, rules: {...}} to replace the defaults.",
            "anyOf": [
                { "type": "string", "minLength": 1 },
                {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["rules"],
                    "properties": {
                        "defaults": { "type": "boolean" },
                        "rules": { "type": "object", "additionalProperties": { "type": ["string", "number"] } }
                    }
                },
                { "type": "object", "not": { "required": ["rules"] }, "additionalProperties": { "type": ["string", "number"] } }
            ]
        }
    })
}

/// How a target's rows are made and gated: one per kernel or per operation, a missing kernel,
/// the counters that explain a change, the SASS the cache hashes.
fn row_properties() -> Value {
    json!({
        "kernels": {
            "description": "each (default): a row per kernel the filter selects. sum: one row per operation, the time (and .sum counters) of every selected kernel summed per iteration, so a GEMM is gated as one operation whichever kernel the library picks; the kernels behind the row are listed, and a change of kernel set is a note. Registers, occupancy, percentages, rates and averages are refused on such rows.",
            "enum": ["each", "sum"]
        },
        "allow_missing": {
            "description": "Baseline rows this run should have measured and did not (a kernel that disappeared or was renamed) do not fail the gate. Default false.",
            "type": "boolean"
        },
        "explain": {
            "description": "Collect the counters that say why a time changed (instructions, DRAM and L2 bytes, bank conflicts, spills, occupancy, warp stalls): true in every run of this target, remeasure only in baseline updates and when check re-measures doubtful rows or explains a regression or improvement; they cost extra ncu replay passes (docs/why.md). Default false.",
            "anyOf": [{ "type": "boolean" }, { "enum": ["remeasure"] }]
        },
        "sass": {
            "description": "The file, or files, whose SASS the cache hashes instead of the executable and the shared libraries it names; relative to the spec (docs/sass-cache.md).",
            "anyOf": [
                { "type": "string", "minLength": 1 },
                { "type": "array", "minItems": 1, "items": { "type": "string", "minLength": 1 } }
            ]
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::load::{SETTINGS_KEYS, TARGET_KEYS, TOP_KEYS};
    use crate::spec::threshold::MAP_KEYS;
    use std::collections::BTreeSet;

    fn keys(v: &Value) -> BTreeSet<String> {
        v.as_object().expect("an object").keys().cloned().collect()
    }

    fn set(keys: &[&str]) -> BTreeSet<String> {
        keys.iter().map(|k| (*k).to_owned()).collect()
    }

    /// The schema's keys are the loader's key tables, both ways: a key the loader reads and the
    /// schema lacks would be flagged by editors, one the schema has and the loader refuses would
    /// be offered by them.
    #[test]
    fn schema_keys_are_the_loaders_key_tables() {
        let s = json_schema();
        assert_eq!(keys(&s["properties"]), set(TOP_KEYS));
        assert_eq!(s["required"], json!(["version", "targets"]));
        assert_eq!(
            keys(&s["properties"]["settings"]["properties"]),
            set(SETTINGS_KEYS)
        );
        assert_eq!(
            keys(&s["properties"]["targets"]["items"]["properties"]),
            set(TARGET_KEYS)
        );
        let mut defaults = set(TARGET_KEYS);
        defaults.remove("name");
        assert_eq!(keys(&s["properties"]["defaults"]["properties"]), defaults);
        let rules = s["definitions"]["threshold"]["anyOf"].as_array().unwrap();
        let mut map_keys = BTreeSet::new();
        for rule in rules.iter().filter(|r| r.get("properties").is_some()) {
            map_keys.extend(keys(&rule["properties"]));
        }
        assert_eq!(map_keys, set(MAP_KEYS));
    }
}
