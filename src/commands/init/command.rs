//! The benchmark's command: the argv after `--` turned into a template with size parameters, the
//! program ncu names, the target's name, and the YAML quoting of what init writes.

use super::*;

/// The program named by ncu's first `==PROF== Connected to process N (PATH)` line.
pub(crate) fn connected_program(raw: &str) -> Option<String> {
    raw.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("==PROF== Connected to process ")?;
        let open = rest.find('(')?;
        let path = rest[open + 1..].strip_suffix(')')?.trim();
        (!path.is_empty() && !path.chars().any(char::is_control)).then(|| path.to_owned())
    })
}

/// A command line split into the spec's argv template and its size parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommandTemplate {
    /// The argv with `{param}` placeholders (literal braces doubled).
    pub argv: Vec<String>,
    /// Parameter name -> value, in command-line order.
    pub params: Vec<(String, String)>,
}

/// Turn numeric arguments into size parameters: `--n 1024` and `--n=1024` become `{n}`, a
/// numeric positional argument becomes `{argN}` (N its position). Everything else stays literal.
pub(crate) fn command_template(argv: &[String]) -> CommandTemplate {
    let mut out = CommandTemplate {
        argv: Vec::with_capacity(argv.len()),
        params: Vec::new(),
    };
    let add = |wanted: String, value: &str, params: &mut Vec<(String, String)>| -> String {
        let mut name = wanted;
        let mut i = 2;
        while params.iter().any(|(n, _)| *n == name) {
            name = format!(
                "{}_{i}",
                name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '_')
            );
            i += 1;
        }
        params.push((name.clone(), value.to_owned()));
        name
    };
    for (i, arg) in argv.iter().enumerate() {
        if i == 0 {
            out.argv.push(escape_braces(arg));
            continue;
        }
        if let Some((flag, value)) = arg
            .split_once('=')
            .filter(|(f, v)| f.starts_with('-') && is_number(v))
            && let Some(name) = param_from_flag(flag).filter(|n| !is_loop_count(n))
        {
            let name = add(name, value, &mut out.params);
            out.argv.push(format!("{}={{{name}}}", escape_braces(flag)));
            continue;
        }
        if is_number(arg) {
            let from_flag = argv
                .get(i - 1)
                .filter(|p| i > 1 && !is_number(p) && !p.contains('='))
                .and_then(|p| param_from_flag(p));
            if from_flag.as_deref().is_some_and(is_loop_count) {
                // How many times the program runs its kernels, not a problem size: more launches
                // give more samples per run, another value is not another size to gate.
                out.argv.push(escape_braces(arg));
                continue;
            }
            let name = add(
                from_flag.unwrap_or_else(|| format!("arg{i}")),
                arg,
                &mut out.params,
            );
            out.argv.push(format!("{{{name}}}"));
            continue;
        }
        out.argv.push(escape_braces(arg));
    }
    out
}

/// A flag that counts loop iterations (`--launches 3`, `--iters 10`, `--warmup 2`): kept in the
/// command as written, out of the sizes.
pub(super) fn is_loop_count(param: &str) -> bool {
    matches!(
        param,
        "launches"
            | "iters"
            | "iter"
            | "iterations"
            | "niter"
            | "n_iter"
            | "n_iters"
            | "num_iters"
            | "repeat"
            | "repeats"
            | "reps"
            | "repetitions"
            | "nrep"
            | "warmup"
            | "warmups"
            | "warmup_iters"
            | "runs"
            | "num_runs"
            | "steps"
            | "loops"
            | "trials"
            | "bench_iters"
            | "profile_iters"
    )
}

/// A number as a size value: digits with an optional sign, fraction and exponent.
pub(super) fn is_number(s: &str) -> bool {
    let re = regex::Regex::new(r"^[+-]?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$");
    re.is_ok_and(|re| re.is_match(s))
}

/// `--block-size` -> `block_size`; `-n` -> `n`; `--2d` -> `p_2d`; not a flag -> `None`.
pub(super) fn param_from_flag(flag: &str) -> Option<String> {
    let bare = flag.strip_prefix("--").or_else(|| flag.strip_prefix('-'))?;
    let name: String = bare
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let name = name.trim_matches('_').to_owned();
    if name.is_empty() {
        return None;
    }
    Some(if name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("p_{name}")
    } else {
        name
    })
}

pub(super) fn escape_braces(s: &str) -> String {
    s.replace('{', "{{").replace('}', "}}")
}

/// One word for a POSIX shell, quoted only when it needs to be (the printed next commands).
pub(super) fn shell_word(a: &str) -> String {
    crate::profile::extract::shell_word(a)
}

/// Control characters (a kernel name is arbitrary text) never reach the YAML or the terminal.
pub(super) fn one_line(s: &str) -> String {
    // Also the characters YAML 1.1 readers take as line breaks (U+2028, U+2029; U+0085 is a
    // control): text from a file in a comment of the spec stays in the comment.
    s.chars()
        .map(|c| {
            if c.is_control() || crate::foundation::sanitize::hides_text(c) {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// A double-quoted YAML scalar of `s`: JSON's string syntax (valid YAML), with the characters
/// JSON leaves raw and YAML must not see raw (DEL, C1 controls, U+2028/U+2029, the invisible
/// ones) as `\uXXXX` escapes, so that the scalar reads back as `s` in any YAML reader.
pub(super) fn yaml_quoted(s: &str) -> String {
    let json = serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned());
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c.is_control() || crate::foundation::sanitize::hides_text(c) {
            let _ = std::fmt::Write::write_fmt(&mut out, format_args!("\\u{:04X}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// A YAML scalar: plain when that reads back as the same string, else double-quoted (JSON's
/// string syntax is valid YAML).
pub(super) fn yaml_str(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || "._/-".contains(c))
        // `-x` is plain YAML; a lone `-` or `- x` is a sequence entry.
        && s != "-"
        && !is_number(s)
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "y" | "n" | ".inf" | ".nan"
        );
    if plain { s.to_owned() } else { yaml_quoted(s) }
}

/// A size value: plain when it is a decimal integer (as hand-written specs have it), else quoted.
pub(super) fn size_value(v: &str) -> String {
    let int = v == "0"
        || (v
            .strip_prefix('-')
            .unwrap_or(v)
            .starts_with(|c: char| ('1'..='9').contains(&c))
            && v.strip_prefix('-')
                .unwrap_or(v)
                .chars()
                .all(|c| c.is_ascii_digit()));
    if int { v.to_owned() } else { yaml_str(v) }
}

/// The program a command runs, past an interpreter and its options: `python3 torch_work.py`
/// -> `torch_work.py`, `python -m pkg.bench` -> `pkg.bench`, `./build/bench` -> itself.
pub(super) fn program_of(argv: &[String]) -> Option<&str> {
    let first = argv.first()?;
    let Some(interpreter) = crate::foundation::program::interpreter(first) else {
        return Some(first);
    };
    let mut rest = argv[1..].iter();
    if interpreter == "env" {
        // `env [-i] NAME=value ... program args`: the program is the first other word.
        let at = argv[1..]
            .iter()
            .position(|a| !a.starts_with('-') && !a.contains('='));
        return at.map_or(Some(first), |i| program_of(&argv[1 + i..]));
    }
    while let Some(a) = rest.next() {
        if a == "-m" {
            return rest
                .next()
                .map(|m| m.rsplit('.').next().unwrap_or(m))
                .or(Some(first));
        }
        if a == "run" || a == "launch" || a.starts_with('-') {
            continue;
        }
        return Some(a);
    }
    Some(first)
}

/// A target name from the program's file name: `./build/my_bench` -> `my_bench`.
pub(super) fn target_name(program: Option<&str>) -> String {
    let stem = program
        .and_then(|p| p.rsplit(['/', '\\']).next())
        .map(|f| f.strip_suffix(".exe").unwrap_or(f))
        .map(|f| {
            [".py", ".sh", ".js", ".rb", ".pl", ".jl"]
                .iter()
                .find_map(|x| f.strip_suffix(x))
                .unwrap_or(f)
        })
        .unwrap_or_default();
    let name: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_-.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = name.trim_start_matches(['.', '-']).to_owned();
    if name.is_empty() || program == Some(PLACEHOLDER_PROGRAM) {
        "bench".to_owned()
    } else {
        name
    }
}
