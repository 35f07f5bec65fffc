//! nvbench's `--json` output, every generation (docs/harnesses.md; the shared fixtures'
//! SCHEMAS.md), detected by feature, never by `meta.version.json` (it has said "1.0.0" since 2022):
//!
//! - 2021 (Gen-0): `states` and `summaries` are objects keyed by name, each value
//!   `{type, value}`; summaries are named in words ("Average GPU Time (Cold)") and mapped to the
//!   later tags here.
//! - 2022 on (Gen-1): `states` a list, `summaries` a list of `{tag, hint, data: [{name, type,
//!   value}]}`, values as strings, `null` allowed; 2025-26 files add min/max, quartiles,
//!   `sm_clock_rate`, `cold_warmup_runs` and sidecar paths relative to the JSON file.
//!
//! Metrics of a state: every numeric summary under its tag (one value per process), and
//! `nv/cold/time/gpu`: the per-sample cold GPU times of the `--jsonbin` sidecar
//! (`<json>-bin/<n>.bin`, little-endian float32 seconds) when there is one, else the mean (one
//! value per process, a summary). With the frequencies sidecar (`<json>-freqs-bin/<n>.bin`,
//! float32 Hz), `nv/cold/sm_clock` (Hz) and `nv/cold/cycles/gpu` (time x clock, per sample):
//! nvbench-compare-robust's cycle-space view, which tells a slower kernel from a slower clock.

use std::borrow::Cow;
use std::path::Path;

use serde_json::Value;

use super::{
    Entry, Format, HarnessError, HarnessFile, Metric, Sidecars, Status, check_clock, check_finite,
    check_spread, time_ns,
};

mod typed;
pub use typed::read_bytes;

/// The per-sample cold GPU times: the metric gated by default.
pub const GPU_TIME: &str = "nv/cold/time/gpu";
/// The per-sample SM clock (Hz), with the frequencies sidecar.
pub const SM_CLOCK: &str = "nv/cold/sm_clock";
/// The per-sample cold GPU time in SM cycles (time x clock), with both sidecars.
pub const GPU_CYCLES: &str = "nv/cold/cycles/gpu";
const TIMES_TAG: &str = "nv/json/bin:nv/cold/sample_times";
const FREQS_TAG: &str = "nv/json/freqs-bin:nv/cold/sample_freqs";

/// The 2021 summaries' names and the tags nvbench gave them in 2022.
const GEN0_TAGS: &[(&str, &str)] = &[
    ("Average GPU Time (Cold)", "nv/cold/time/gpu/mean"),
    ("Average CPU Time (Cold)", "nv/cold/time/cpu/mean"),
    (
        "GPU Relative Standard Deviation (Cold)",
        "nv/cold/time/gpu/stdev/relative",
    ),
    (
        "CPU Relative Standard Deviation (Cold)",
        "nv/cold/time/cpu/stdev/relative",
    ),
    ("Number of Samples (Cold)", "nv/cold/sample_size"),
    ("Average GPU Time (Batch)", "nv/batch/time/gpu/mean"),
    ("Number of Samples (Batch)", "nv/batch/sample_size"),
    (
        "Average Global Memory Throughput",
        "nv/cold/bw/global/bytes_per_second",
    ),
    (
        "Percent Peak Global Memory Throughput",
        "nv/cold/bw/global/utilization",
    ),
    ("Element Throughput", "nv/cold/bw/item_rate"),
];

const HELP: &str =
    "use the file nvbench wrote with `--json PATH` (and `--jsonbin` for per-sample times), unedited";

/// A summary's value as the file has it: a string (`"0.00026"`, nvbench's way), a number,
/// `null`, or something else.
#[derive(Debug, Clone, Copy)]
enum Datum<'a> {
    Text(&'a str),
    Number(f64),
    Null,
    Other,
}

impl<'a> Datum<'a> {
    fn of(v: &'a Value) -> Self {
        match v {
            Value::String(s) => Self::Text(s),
            Value::Number(n) => n.as_f64().map_or(Self::Other, Self::Number),
            Value::Null => Self::Null,
            _ => Self::Other,
        }
    }

    fn as_str(self) -> Option<&'a str> {
        match self {
            Self::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The number a string or a number holds.
    fn number(self) -> Option<f64> {
        match self {
            Self::Text(s) => s.trim().parse::<f64>().ok(),
            Self::Number(n) => Some(n),
            Self::Null | Self::Other => None,
        }
    }
}

/// One summary of a state: its tag, hint and named values.
struct Summary<'a> {
    tag: Cow<'a, str>,
    hint: &'a str,
    data: Vec<(&'a str, Datum<'a>)>,
}

impl<'a> Summary<'a> {
    fn get(&self, name: &str) -> Option<Datum<'a>> {
        self.data.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }
}

/// One state as read, whichever way: its name, device, whether skipped (and why), summaries.
struct StateIn<'a> {
    name: Cow<'a, str>,
    device: Option<i64>,
    skipped: Option<&'a str>,
    summaries: Vec<Summary<'a>>,
}

/// The benchmarks of a file as read: name and states.
type BenchesIn<'a> = Vec<(&'a str, Vec<StateIn<'a>>)>;

/// `{type, value}` (Gen-0) or the value itself.
fn typed(v: &Value) -> &Value {
    v.get("value").unwrap_or(v)
}

fn summaries(state: &Value) -> Vec<Summary<'_>> {
    match state.get("summaries") {
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(|s| {
                let tag = s.get("tag")?.as_str()?.into();
                let hint = s.get("hint").and_then(Value::as_str).unwrap_or("");
                let data = s
                    .get("data")
                    .and_then(Value::as_array)
                    .map(|d| {
                        d.iter()
                            .filter_map(|x| {
                                Some((
                                    x.get("name")?.as_str()?,
                                    x.get("value").map_or(Datum::Null, Datum::of),
                                ))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                Some(Summary { tag, hint, data })
            })
            .collect(),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(name, s)| {
                let tag = GEN0_TAGS
                    .iter()
                    .find(|(n, _)| n == name)
                    .map_or_else(|| name.as_str().into(), |(_, t)| (*t).into());
                let hint = s.get("hint").map(typed).and_then(Value::as_str).unwrap_or("");
                let value = s.get("value").map_or(Datum::Null, |v| Datum::of(typed(v)));
                Summary {
                    tag,
                    hint,
                    data: vec![("value", value)],
                }
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// A hint's unit, and the factor from nvbench's unit to it.
fn unit_of(hint: &str) -> (&'static str, f64) {
    match hint {
        "duration" => ("ns", 1e9),
        "byte_rate" => ("byte/second", 1.0),
        "item_rate" => ("1/second", 1.0),
        "frequency" => ("Hz", 1.0),
        "bytes" => ("byte", 1.0),
        "percentage" => ("%", 100.0),
        _ => ("", 1.0),
    }
}

/// Whether a duration summary is a spread of times (a standard deviation), which may be zero;
/// every other duration is a time, at least [`super::MIN_TIME_NS`].
fn is_spread(tag: &str) -> bool {
    tag.contains("/stdev")
}

/// The state's name as a key: the axis `name=value` pairs without `Device=` and without the
/// `{ct}`/`{io}` markers (`T{ct}=I32 Elements{io}=2^16` -> `T=I32,Elements=2^16`).
pub fn normalise_state(name: &str) -> String {
    let parts: Vec<String> = name
        .split_whitespace()
        .filter(|p| !p.starts_with("Device="))
        .map(|p| match p.split_once('=') {
            Some((axis, value)) => {
                let axis = axis.split_once('{').map_or(axis, |(a, _)| a);
                format!("{axis}={value}")
            }
            None => p.to_owned(),
        })
        .collect();
    parts.join(",")
}

/// The float32 values of a sidecar, checked against the count the JSON gives.
///
/// # Errors
/// A length that is no whole number of float32 values, or another count than `size`.
pub fn sidecar_values(bytes: &[u8], size: Option<usize>, what: &str) -> Result<Vec<f64>, String> {
    if !bytes.len().is_multiple_of(4) {
        return Err(format!(
            "the sidecar {what} is {} bytes, not a whole number of float32 samples",
            bytes.len()
        ));
    }
    let n = bytes.len() / 4;
    if let Some(size) = size.filter(|s| *s != n) {
        return Err(format!(
            "the sidecar {what} holds {n} samples and the JSON says {size}"
        ));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        .collect())
}

/// The samples of the sidecar a `nv/json/...` summary names.
fn sidecar(
    s: &Summary<'_>,
    sidecars: Sidecars<'_>,
    origin: &Path,
    bench: &str,
    state: &str,
) -> Result<Option<Vec<f64>>, HarnessError> {
    let Some(name) = s.get("filename").and_then(Datum::as_str) else {
        return Ok(None);
    };
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a count; a negative one saturates to 0 and mismatches"
    )]
    let size = s.get("size").and_then(Datum::number).map(|n| n as usize);
    let bad = |m: String| HarnessError::new(origin, m, HELP).at(bench, state);
    match sidecars(name).map_err(&bad)? {
        Some(bytes) => sidecar_values(&bytes, size, name).map(Some).map_err(bad),
        None => Ok(None),
    }
}

/// The device names of the file, by id.
fn devices(doc: &Value) -> Vec<(i64, String)> {
    doc.get("devices")
        .and_then(Value::as_array)
        .map(|ds| {
            ds.iter()
                .filter_map(|d| Some((d.get("id")?.as_i64()?, d.get("name")?.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

/// Read an nvbench JSON document.
///
/// # Errors
/// A [`HarnessError`] naming the file, benchmark and state.
pub fn read(doc: &Value, origin: &Path, sidecars: Sidecars<'_>) -> Result<HarnessFile, HarnessError> {
    let Some(list) = doc.get("benchmarks").and_then(Value::as_array) else {
        return Err(HarnessError::new(origin, "has no `benchmarks` list", HELP));
    };
    let mut benches: BenchesIn<'_> = Vec::with_capacity(list.len());
    for b in list {
        let name = b.get("name").and_then(Value::as_str).unwrap_or("");
        let states: Vec<(Cow<'_, str>, &Value)> = match b.get("states") {
            Some(Value::Array(list)) => list
                .iter()
                .map(|s| (s.get("name").and_then(Value::as_str).unwrap_or("").into(), s))
                .collect(),
            Some(Value::Object(map)) => map.iter().map(|(k, v)| (k.as_str().into(), v)).collect(),
            _ => Vec::new(),
        };
        let states = states
            .into_iter()
            .map(|(name, s)| StateIn {
                name,
                device: s.get("device").and_then(Value::as_i64),
                skipped: (s.get("is_skipped").and_then(Value::as_bool) == Some(true)).then(|| {
                    s.get("skip_reason")
                        .and_then(Value::as_str)
                        .unwrap_or("no reason given")
                }),
                summaries: summaries(s),
            })
            .collect();
        benches.push((name, states));
    }
    let version = doc
        .pointer("/meta/version/nvbench/git_version")
        .or_else(|| doc.pointer("/meta/version/nvbench/string"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    build(devices(doc), benches, version, origin, sidecars)
}

/// The entries of the benchmarks read, the same whichever reader read them.
fn build(
    devs: Vec<(i64, String)>,
    benches: BenchesIn<'_>,
    version: Option<String>,
    origin: &Path,
    sidecars: Sidecars<'_>,
) -> Result<HarnessFile, HarnessError> {
    let several = devs.len() > 1;
    let mut entries = Vec::new();
    let mut notes = Vec::new();
    for (bench, states) in benches {
        if bench.is_empty() {
            return Err(HarnessError::new(origin, "a benchmark has no name", HELP));
        }
        for s in states {
            let device = match s.device {
                None => None,
                Some(id) => match devs.iter().find(|(i, _)| *i == id) {
                    Some((_, n)) => Some(n.clone()),
                    None => return Err(unlisted_device(id, &devs, origin, bench, &s.name)),
                },
            };
            let mut state = normalise_state(&s.name);
            if several && let Some(d) = &device {
                state = if state.is_empty() {
                    format!("@{d}")
                } else {
                    format!("{state}@{d}")
                };
            }
            let entry = read_state(s, bench, &state, device, origin, sidecars, &mut notes)?;
            entries.push(entry);
        }
    }
    Ok(HarnessFile {
        format: Format::Nvbench,
        devices: devs.into_iter().map(|(_, n)| n).collect(),
        version,
        entries,
        notes,
    })
}

/// A state that names a device the file's `devices` list does not hold: its samples would be
/// keyed by no GPU, or by another.
fn unlisted_device(id: i64, devs: &[(i64, String)], origin: &Path, bench: &str, state: &str) -> HarnessError {
    let listed: Vec<String> = devs.iter().map(|(i, _)| i.to_string()).collect();
    HarnessError::new(
        origin,
        format!(
            "the state names device {id}, and the file's `devices` list {}",
            if listed.is_empty() {
                "is empty".to_owned()
            } else {
                format!("holds {} only", listed.join(", "))
            }
        ),
        HELP,
    )
    .at(bench, &normalise_state(state))
}

/// One state: skipped, or its metrics.
fn read_state(
    s: StateIn<'_>,
    bench: &str,
    state: &str,
    device: Option<String>,
    origin: &Path,
    sidecars: Sidecars<'_>,
    notes: &mut Vec<String>,
) -> Result<Entry, HarnessError> {
    let mut entry = Entry {
        benchmark: bench.to_owned(),
        state: state.to_owned(),
        device,
        status: Status::Measured,
        metrics: Vec::new(),
    };
    if let Some(why) = s.skipped {
        entry.status = Status::Skipped(format!("nvbench skipped it: {why}"));
        return Ok(entry);
    }
    let mut times = None;
    let mut freqs = None;
    for sum in s.summaries {
        if sum.tag == TIMES_TAG {
            times = sidecar(&sum, sidecars, origin, bench, state)?;
            continue;
        }
        if sum.tag == FREQS_TAG {
            freqs = sidecar(&sum, sidecars, origin, bench, state)?;
            continue;
        }
        let Some(raw) = sum.get("value") else { continue };
        if matches!(raw, Datum::Null) {
            notes.push(format!("{bench} [{state}]: `{}` is null", sum.tag));
            continue;
        }
        let Some(v) = raw.number() else { continue };
        let (unit, factor) = unit_of(sum.hint);
        let what = format!("summary `{}`", sum.tag);
        let v = if unit != "ns" {
            check_finite(v, &what, origin, bench, state)? * factor
        } else if is_spread(&sum.tag) {
            check_spread(v, &what, origin, bench, state)? * factor
        } else {
            time_ns(v, factor, &what, origin, bench, state)?
        };
        entry.metrics.push(Metric {
            name: sum.tag.into_owned(),
            unit: unit.to_owned(),
            values: vec![v],
            per_sample: false,
        });
    }
    per_sample(&mut entry, times, freqs, origin)?;
    Ok(entry)
}

/// `nv/cold/time/gpu` (the samples, else the mean), and with the clocks `nv/cold/sm_clock` and
/// `nv/cold/cycles/gpu`.
fn per_sample(
    entry: &mut Entry,
    times: Option<Vec<f64>>,
    freqs: Option<Vec<f64>>,
    origin: &Path,
) -> Result<(), HarnessError> {
    let (bench, state) = (entry.benchmark.clone(), entry.state.clone());
    let Some(times) = times else {
        if let Some(mean) = entry.metric("nv/cold/time/gpu/mean") {
            let values = mean.values.clone();
            entry.metrics.push(Metric {
                name: GPU_TIME.to_owned(),
                unit: "ns".to_owned(),
                values,
                per_sample: false,
            });
        }
        return Ok(());
    };
    if times.is_empty() {
        return Err(
            HarnessError::new(origin, "the sample-times sidecar holds no sample", HELP).at(&bench, &state),
        );
    }
    let mut ns = Vec::with_capacity(times.len());
    for t in &times {
        ns.push(time_ns(
            *t,
            1e9,
            "a cold GPU time sample",
            origin,
            &bench,
            &state,
        )?);
    }
    if let Some(f) = freqs {
        if f.len() != times.len() {
            return Err(HarnessError::new(
                origin,
                format!(
                    "the frequencies sidecar holds {} samples and the times sidecar {}",
                    f.len(),
                    times.len()
                ),
                HELP,
            )
            .at(&bench, &state));
        }
        for hz in &f {
            check_clock(*hz, "an SM clock sample", origin, &bench, &state)?;
        }
        let cycles = times.iter().zip(&f).map(|(t, hz)| t * hz).collect();
        entry.metrics.push(Metric {
            name: SM_CLOCK.to_owned(),
            unit: "Hz".to_owned(),
            values: f,
            per_sample: true,
        });
        entry.metrics.push(Metric {
            name: GPU_CYCLES.to_owned(),
            unit: "cycle".to_owned(),
            values: cycles,
            per_sample: true,
        });
    }
    entry.metrics.push(Metric {
        name: GPU_TIME.to_owned(),
        unit: "ns".to_owned(),
        values: ns,
        per_sample: true,
    });
    Ok(())
}
