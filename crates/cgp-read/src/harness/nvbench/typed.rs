//! The typed reading of 2022-and-later files.
//!
//! Most files are of the 2022 form or later (states and summaries as lists). They are read into
//! these borrowed structs in one pass, skipping what the gate does not use (axes, device
//! properties), instead of building a `serde_json::Value` of every field: serde_json's own typed
//! deserialisation, several times faster here (docs/harnesses.md, "Reading speed"). A file they do
//! not fit (the 2021 form, a damaged file) is read through `Value` as before, which gives the
//! messages.

use std::borrow::Cow;
use std::path::Path;

use super::{BenchesIn, Datum, StateIn, Summary, build};
use crate::harness::{HarnessError, HarnessFile, Sidecars};

#[derive(serde::Deserialize)]
struct FastDoc<'a> {
    #[serde(borrow, default)]
    meta: Option<FastMeta<'a>>,
    // Required: every nvbench file since 2021 has it, and a Google Benchmark or pytest-benchmark
    // file without benchmarks must not read as an nvbench one.
    #[serde(borrow)]
    devices: Vec<FastDevice<'a>>,
    #[serde(borrow)]
    benchmarks: Vec<FastBench<'a>>,
}

#[derive(serde::Deserialize)]
struct FastMeta<'a> {
    #[serde(borrow, default)]
    version: Option<FastVersions<'a>>,
}

#[derive(serde::Deserialize)]
struct FastVersions<'a> {
    #[serde(borrow, default)]
    nvbench: Option<FastNvbench<'a>>,
}

#[derive(serde::Deserialize)]
struct FastNvbench<'a> {
    #[serde(borrow, default)]
    git_version: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    string: Option<Cow<'a, str>>,
}

#[derive(serde::Deserialize)]
struct FastDevice<'a> {
    id: i64,
    #[serde(borrow)]
    name: Cow<'a, str>,
}

#[derive(serde::Deserialize)]
struct FastBench<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    states: Vec<FastState<'a>>,
}

#[derive(serde::Deserialize)]
struct FastState<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(default)]
    device: Option<i64>,
    #[serde(default)]
    is_skipped: Option<bool>,
    #[serde(borrow, default)]
    skip_reason: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    summaries: Option<Vec<FastSummary<'a>>>,
}

#[derive(serde::Deserialize)]
struct FastSummary<'a> {
    #[serde(borrow)]
    tag: Cow<'a, str>,
    #[serde(borrow, default)]
    hint: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    data: Vec<FastDatum<'a>>,
}

#[derive(serde::Deserialize)]
struct FastDatum<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    value: FastValue<'a>,
}

/// A summary value, typed: a string, a number, `null`, or something else (skipped whole).
#[derive(Default)]
enum FastValue<'a> {
    Text(Cow<'a, str>),
    Number(f64),
    #[default]
    Null,
    Other,
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for FastValue<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
            type Value = FastValue<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a summary value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(FastValue::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(FastValue::Text(Cow::Owned(v.to_owned())))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                Ok(FastValue::Number(v))
            }
            #[allow(clippy::cast_precision_loss, reason = "as serde_json's own as_f64")]
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(FastValue::Number(v as f64))
            }
            #[allow(clippy::cast_precision_loss, reason = "as serde_json's own as_f64")]
            fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
                Ok(FastValue::Number(v as f64))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(FastValue::Other)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(FastValue::Null)
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(FastValue::Null)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(FastValue::Other)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(FastValue::Other)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl FastValue<'_> {
    fn datum(&self) -> Datum<'_> {
        match self {
            Self::Text(t) => Datum::Text(t),
            Self::Number(n) => Datum::Number(*n),
            Self::Null => Datum::Null,
            Self::Other => Datum::Other,
        }
    }
}

/// Read the bytes of a 2022-and-later nvbench file in one typed pass; `None` when they are not
/// one (the caller reads them through `Value`, which says what is wrong).
pub fn read_bytes(
    bytes: &[u8],
    origin: &Path,
    sidecars: Sidecars<'_>,
) -> Option<Result<HarnessFile, HarnessError>> {
    let doc: FastDoc<'_> = serde_json::from_slice(bytes).ok()?;
    let benches: BenchesIn<'_> = doc
        .benchmarks
        .iter()
        .map(|b| {
            let states = b
                .states
                .iter()
                .map(|s| StateIn {
                    name: Cow::Borrowed(s.name.as_ref()),
                    device: s.device,
                    skipped: (s.is_skipped == Some(true))
                        .then(|| s.skip_reason.as_deref().unwrap_or("no reason given")),
                    summaries: s
                        .summaries
                        .iter()
                        .flatten()
                        .map(|x| Summary {
                            tag: Cow::Borrowed(x.tag.as_ref()),
                            hint: x.hint.as_deref().unwrap_or(""),
                            data: x
                                .data
                                .iter()
                                .map(|d| (d.name.as_ref(), d.value.datum()))
                                .collect(),
                        })
                        .collect(),
                })
                .collect();
            (b.name.as_ref(), states)
        })
        .collect();
    let version = doc
        .meta
        .as_ref()
        .and_then(|m| m.version.as_ref())
        .and_then(|v| v.nvbench.as_ref())
        .and_then(|n| n.git_version.as_deref().or(n.string.as_deref()))
        .map(str::to_owned);
    let devs = doc
        .devices
        .iter()
        .map(|d| (d.id, d.name.clone().into_owned()))
        .collect();
    Some(build(devs, benches, version, origin, sidecars))
}
