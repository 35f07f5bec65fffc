//! Run control of a target: the timeout (and the duration syntax) and the clocks.

use super::*;

pub(super) fn timeout(ctx: &Ctx<'_>, node: &Node, what: &str) -> Result<Duration> {
    let help = "write a duration with a unit: `500ms`, `120s`, `5m` or `1h`";
    let text = match &node.kind {
        Kind::Scalar(s) => match s.typed() {
            Typed::Str(t) => t,
            Typed::Int(_) | Typed::Float(_) => {
                return Err(ctx
                    .err(node, format!("`timeout` of {what} has no unit: `{}`", s.text))
                    .help(format!("{help}, e.g. `{}s`", s.text)));
            }
            _ => {
                return Err(ctx
                    .err(
                        node,
                        format!("`timeout` of {what} must be a duration, found {}", describe(node)),
                    )
                    .help(help));
            }
        },
        _ => {
            return Err(ctx
                .err(
                    node,
                    format!("`timeout` of {what} must be a duration, found {}", describe(node)),
                )
                .help(help));
        }
    };
    parse_duration(text).map_err(|e| ctx.err(node, format!("bad `timeout` of {what}: {e}")).help(help))
}

/// `500ms`, `120s`, `1.5s`, `5m`, `1h`.
///
/// Hand-written rather than jiff's or humantime's parser on purpose: the spec accepts exactly one
/// number and one of these four units, and each mistake has its own message (no unit, unknown
/// unit, zero) that names the key at its line and column; those parsers accept more forms (`1h
/// 30m`, ISO 8601 `PT5M`, `5 minutes`) that the spec does not document.
pub fn parse_duration(text: &str) -> std::result::Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{text}` does not start with a number"))?;
    let scale = match unit.trim() {
        "ms" => 1e-3,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        "" => return Err(format!("`{text}` has no unit")),
        other => return Err(format!("unknown unit `{other}` in `{text}`")),
    };
    let secs = value * scale;
    if secs <= 0.0 {
        return Err(format!("`{text}` is not longer than zero"));
    }
    Duration::try_from_secs_f64(secs).map_err(|_| format!("`{text}` is too long"))
}

/// `clocks:` and `clock_control:` together: only one party may lock the clocks.
pub(super) fn clocks(
    ctx: &Ctx<'_>,
    clocks_node: Option<&Node>,
    control_node: Option<&Node>,
    what: &str,
) -> Result<(ClockSetting, ClockControl)> {
    let clocks = match clocks_node {
        None => ClockSetting::Ncu,
        Some(n) => match &n.kind {
            Kind::Map(_) => {
                let f = ctx.fields(n, &format!("`clocks` of {what}"), &["sm_mhz", "mem_mhz"])?;
                let mhz = |key: &str| -> Result<u32> {
                    let Some(v) = f.get(key) else {
                        return Err(ctx
                            .err(n, format!("`clocks` of {what} has no `{key}`"))
                            .help("fixed clocks need both `sm_mhz` and `mem_mhz`, e.g. `{sm_mhz: 1410, mem_mhz: 1215}`"));
                    };
                    let x: u32 = ctx.uint(v, &format!("`clocks.{key}` of {what}"))?;
                    if x == 0 {
                        return Err(ctx.err(v, format!("`clocks.{key}` of {what} must be more than 0")));
                    }
                    Ok(x)
                };
                ClockSetting::Fixed {
                    sm_mhz: mhz("sm_mhz")?,
                    mem_mhz: mhz("mem_mhz")?,
                }
            }
            _ => match ctx
                .choice(
                    n,
                    &format!("`clocks` of {what}"),
                    &["ncu", "nvml-base", "nvml-max", "none"],
                )
                .map_err(|e| e.help("or fixed clocks: `{sm_mhz: 1410, mem_mhz: 1215}`"))?
            {
                "nvml-base" => ClockSetting::NvmlBase,
                "nvml-max" => ClockSetting::NvmlMax,
                "none" => ClockSetting::None,
                _ => ClockSetting::Ncu,
            },
        },
    };
    let control = match control_node {
        Some(n) => Some((
            match ctx.choice(n, &format!("`clock_control` of {what}"), &["base", "none"])? {
                "base" => ClockControl::Base,
                _ => ClockControl::None,
            },
            n,
        )),
        None => None,
    };
    match (clocks, control) {
        (ClockSetting::Ncu, None | Some((ClockControl::Base, _))) => {
            Ok((ClockSetting::Ncu, ClockControl::Base))
        }
        // ncu told not to lock, and nobody else does: that is `clocks: none`.
        (ClockSetting::Ncu, Some((ClockControl::None, _))) => Ok((ClockSetting::None, ClockControl::None)),
        (other, Some((ClockControl::Base, n))) => {
            let name = match other {
                ClockSetting::NvmlBase => "nvml-base",
                ClockSetting::NvmlMax => "nvml-max",
                ClockSetting::None => "none",
                _ => "fixed clocks",
            };
            Err(ctx
                .err(n, format!("`clock_control: base` conflicts with `clocks: {name}` in {what}"))
                .help(if matches!(other, ClockSetting::None) {
                    "`clocks: none` means nobody touches the clocks, so ncu's clock control is `none`; remove `clock_control`, or use `clocks: ncu` to let ncu lock base clocks"
                } else {
                    "cgp-gate locks the clocks through NVML here, and ncu locking them too would override that; remove `clock_control` (it is `none` then), or use `clocks: ncu`"
                }))
        }
        (other, _) => Ok((other, ClockControl::None)),
    }
}
