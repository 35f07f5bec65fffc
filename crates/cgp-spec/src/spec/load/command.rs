//! How a target runs: its sizes, the command template they fill in, and its environment.

use super::*;

/// Expanded sizes with where each was written (for errors that name a size).
pub(super) fn sizes(ctx: &Ctx<'_>, node: Option<&Node>, what: &str) -> Result<Vec<(Size, Mark)>> {
    let Some(node) = node else {
        return Ok(vec![(Size::default(), Mark { line: 1, column: 1 })]);
    };
    let shape_help = "write `sizes:` as a list of parameter maps (`- {n: 1024}`) or as `{matrix: {m: [64, 128], n: [64, 128]}}`; omit it for a target without parameters";
    let out = match &node.kind {
        Kind::Seq(items) => {
            if items.is_empty() {
                return Err(ctx
                    .err(node, format!("`sizes` of {what} is empty"))
                    .help("omit `sizes` for a target without parameters, or list at least one size"));
            }
            if items.len() > MAX_SIZES {
                return Err(ctx
                    .err(
                        node,
                        format!(
                            "`sizes` of {what} lists {} sizes; at most {MAX_SIZES} are allowed",
                            items.len()
                        ),
                    )
                    .help("list the sizes that matter instead"));
            }
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                let entries = ctx.entries(item, &format!("a size of {what}"))?;
                if entries.is_empty() {
                    return Err(ctx
                        .err(item, format!("a size of {what} has no parameters"))
                        .help(shape_help));
                }
                let mut params = Vec::with_capacity(entries.len());
                for (k, key_node, v) in entries {
                    param_name(ctx, key_node, k, what)?;
                    params.push((k.to_owned(), param_value(ctx, v, k, what)?));
                }
                out.push((Size { params }, item.mark));
            }
            out
        }
        Kind::Map(_) => size_matrix(ctx, node, what, shape_help)?,
        Kind::Scalar(_) => {
            return Err(ctx
                .err(
                    node,
                    format!(
                        "`sizes` of {what} must be a list or a mapping, found {}",
                        describe(node)
                    ),
                )
                .help(shape_help));
        }
    };
    // Size key -> where it is first listed: a hash lookup, so checking is linear in the sizes
    // (comparing each with every earlier one took 11 s for 10,000).
    let mut first: std::collections::HashMap<String, Mark> =
        std::collections::HashMap::with_capacity(out.len());
    for (s, mark) in &out {
        if let Some(first) = first.insert(s.key(), *mark) {
            return Err(ctx
                .err_at(*mark, format!("size `{}` of {what} is listed twice", s.key()))
                .help(format!(
                    "the first is on line {}; each size is measured once per run",
                    first.line
                )));
        }
    }
    Ok(out)
}

/// `sizes: {matrix: {k: [values]}}`: every combination, the last key varying fastest.
fn size_matrix(ctx: &Ctx<'_>, node: &Node, what: &str, shape_help: &str) -> Result<Vec<(Size, Mark)>> {
    let f = ctx.fields(node, &format!("`sizes` of {what}"), &["matrix"])?;
    let Some(matrix) = f.get("matrix") else {
        return Err(ctx
            .err(node, format!("`sizes` of {what} has no `matrix`"))
            .help(shape_help));
    };
    let axes = ctx.entries(matrix, &format!("`sizes.matrix` of {what}"))?;
    if axes.is_empty() {
        return Err(ctx
            .err(matrix, format!("`sizes.matrix` of {what} is empty"))
            .help("give each parameter a list of values, e.g. `{n: [1024, 4096]}`"));
    }
    let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for (k, key_node, v) in axes {
        param_name(ctx, key_node, k, what)?;
        let values = ctx.seq(v, &format!("the values of `{k}` in `sizes.matrix` of {what}"))?;
        if values.is_empty() {
            return Err(ctx.err(
                v,
                format!("parameter `{k}` in `sizes.matrix` of {what} has no values"),
            ));
        }
        let values = values
            .iter()
            .map(|n| param_value(ctx, n, k, what))
            .collect::<Result<Vec<_>>>()?;
        if combos.len().saturating_mul(values.len()) > MAX_SIZES {
            return Err(ctx
                .err(
                    matrix,
                    format!("`sizes.matrix` of {what} expands to more than {MAX_SIZES} sizes"),
                )
                .help("list the sizes that matter instead"));
        }
        // Earlier keys vary slowest: the last key cycles fastest, like nested loops in
        // key order.
        combos = combos
            .into_iter()
            .flat_map(|prefix| {
                values.iter().map(move |val| {
                    let mut p = prefix.clone();
                    p.push((k.to_owned(), val.clone()));
                    p
                })
            })
            .collect();
    }
    Ok(combos
        .into_iter()
        .map(|params| (Size { params }, matrix.mark))
        .collect())
}

pub(super) fn param_name(ctx: &Ctx<'_>, key_node: &Node, name: &str, what: &str) -> Result<()> {
    if template::is_param_name(name) {
        return Ok(());
    }
    Err(ctx
        .err(
            key_node,
            format!("`{name}` in the sizes of {what} is not a parameter name"),
        )
        .help("a parameter name is a letter or `_` followed by letters, digits or `_`"))
}

/// A size value, as written. It becomes part of the size key (`m=64,n=128`), which names a
/// recording directory, so path and key separators are refused.
pub(super) fn param_value(ctx: &Ctx<'_>, node: &Node, name: &str, what: &str) -> Result<String> {
    let v = ctx.non_empty_text(node, &format!("parameter `{name}` in the sizes of {what}"))?;
    let bad = v
        .chars()
        .find(|c| matches!(c, '/' | '\\' | ',' | '=') || c.is_control());
    if let Some(c) = bad {
        return Err(ctx
            .err(node, format!("the value `{v}` of parameter `{name}` in {what} contains `{}`", c.escape_default()))
            .help("size values name recording directories (`m=64,n=128`), so they cannot contain `/`, `\\`, `,`, `=` or control characters"));
    }
    if v == "." || v == ".." {
        return Err(ctx.err(
            node,
            format!("`{v}` cannot be the value of parameter `{name}` in {what}"),
        ));
    }
    Ok(v.to_owned())
}

/// A target's `command`: the argv of a program run without a shell, each argument checked by
/// [`argument`].
pub(super) fn command(ctx: &Ctx<'_>, node: &Node, what: &str, sizes: &[(Size, Mark)]) -> Result<Vec<String>> {
    let items = command_list(ctx, node, what)?;
    if items.is_empty() {
        return Err(ctx
            .err(node, format!("`command` of {what} is empty"))
            .help("give the program and its arguments, e.g. `[./build/bench, --n, \"{n}\"]`"));
    }
    let mut argv = Vec::with_capacity(items.len());
    for (i, arg) in items.iter().enumerate() {
        argv.push(argument(ctx, arg, i, what, sizes)?);
    }
    Ok(argv)
}

/// The items of `command`, which must be a list (a string is refused with the list it would be:
/// cgp-gate runs no shell).
fn command_list<'n>(ctx: &Ctx<'_>, node: &'n Node, what: &str) -> Result<&'n [Node]> {
    match &node.kind {
        Kind::Seq(items) => Ok(items),
        Kind::Scalar(s) if s.typed() != Typed::Null => {
            let suggestion: Vec<String> = s
                .text
                .split_whitespace()
                .map(|w| {
                    if w.contains(['{', '}', ':', '#', ',']) {
                        format!("\"{w}\"")
                    } else {
                        w.to_owned()
                    }
                })
                .collect();
            Err(ctx
                .err(
                    node,
                    format!(
                        "`command` of {what} must be a list of arguments, found {}",
                        describe(node)
                    ),
                )
                .help(format!(
                    "cgp-gate runs no shell; write the argv as a list: `command: [{}]`",
                    suggestion.join(", ")
                )))
        }
        _ => Err(ctx.err(
            node,
            format!(
                "`command` of {what} must be a list of arguments, found {}",
                describe(node)
            ),
        )),
    }
}

/// Argument `i` (from 0) of `command`: text (an unquoted `{n}` is a YAML mapping, and says so),
/// a program that is not blank, no nul character, and a value for each placeholder in every size.
fn argument(ctx: &Ctx<'_>, arg: &Node, i: usize, what: &str, sizes: &[(Size, Mark)]) -> Result<String> {
    let text = match &arg.kind {
        Kind::Map(entries) => {
            // `- {n}` unquoted is YAML for the mapping `{n: null}`.
            let hint = match entries.as_slice() {
                [(k, _)] => match &k.kind {
                    Kind::Scalar(s) => format!("quote the placeholder: `\"{{{}}}\"`", s.text),
                    _ => "quote the argument".to_owned(),
                },
                _ => "quote the argument".to_owned(),
            };
            return Err(ctx
                .err(
                    arg,
                    format!(
                        "argument {} of the `command` of {what} is a yaml mapping, not text",
                        i + 1
                    ),
                )
                .help(format!("an unquoted `{{...}}` is a yaml mapping; {hint}")));
        }
        _ => ctx.text(arg, &format!("argument {} of the `command` of {what}", i + 1))?,
    };
    if i == 0 && text.trim().is_empty() {
        return Err(ctx.err(arg, format!("the program of {what} is empty")));
    }
    if text.contains('\0') {
        return Err(ctx.err(
            arg,
            format!(
                "argument {} of the `command` of {what} contains a nul character",
                i + 1
            ),
        ));
    }
    let pieces =
        template::parse(text).map_err(|e| ctx.err(arg, format!("in the `command` of {what}: {e}")))?;
    placeholders_have_values(ctx, arg, &pieces, what, sizes)?;
    Ok(text.to_owned())
}

/// Every placeholder of an argument has a value in every size (or the target has no `sizes`).
fn placeholders_have_values(
    ctx: &Ctx<'_>,
    arg: &Node,
    pieces: &[template::Piece],
    what: &str,
    sizes: &[(Size, Mark)],
) -> Result<()> {
    for param in template::params(pieces) {
        if let Some((size, mark)) = sizes.iter().find(|(s, _)| s.get(param).is_none()) {
            let where_ = if size.params.is_empty() {
                format!("{what} has no `sizes`")
            } else {
                format!("size `{}` (line {}) has no `{param}`", size.key(), mark.line)
            };
            return Err(ctx
                .err(
                    arg,
                    format!("placeholder `{{{param}}}` in the `command` of {what} has no value: {where_}"),
                )
                .help(format!(
                    "add `{param}` to every size, or write `{{{{{param}}}}}` for a literal `{{{param}}}`"
                )));
        }
    }
    Ok(())
}

pub(super) fn env(ctx: &Ctx<'_>, node: &Node, what: &str) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for (k, key_node, v) in ctx.entries(node, &format!("`env` of {what}"))? {
        let valid = k
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(ctx
                .err(
                    key_node,
                    format!("`{k}` in the `env` of {what} is not an environment variable name"),
                )
                .help("use letters, digits and `_`, not starting with a digit"));
        }
        let value = match &v.kind {
            Kind::Scalar(s) if s.typed() == Typed::Null => {
                return Err(ctx
                    .err(
                        key_node,
                        format!("environment variable `{k}` of {what} has no value"),
                    )
                    .help("write `\"\"` for an empty value"));
            }
            _ => ctx.text(v, &format!("the value of environment variable `{k}` of {what}"))?,
        };
        if value.contains('\0') {
            return Err(ctx.err(
                v,
                format!("the value of environment variable `{k}` of {what} contains a nul character"),
            ));
        }
        out.insert(k.to_owned(), value.to_owned());
    }
    Ok(out)
}

/// `env_passthrough`: names of variables of cgp-gate's environment the program receives although
/// they look like credentials (`HF_TOKEN`); one name or a list.
///
/// A CI job's own credential (`foundation::secrets::is_ci_credential`: `GITHUB_TOKEN`,
/// `ACTIONS_RUNTIME_TOKEN`, `CI_JOB_TOKEN`, ...) is an error at its position unless `acknowledged`
/// (the names of `env_passthrough_ci_credentials`) names it too: the spec comes from the pull
/// request, and one line of it must not hand the job's token to the code under test.
pub(super) fn env_passthrough(
    ctx: &Ctx<'_>,
    node: &Node,
    what: &str,
    acknowledged: &[String],
) -> Result<Vec<String>> {
    let one = |n: &Node| -> Result<String> {
        let k = ctx.non_empty_text(n, &format!("a name in the `env_passthrough` of {what}"))?;
        let valid = k
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(ctx
                .err(
                    n,
                    format!("`{k}` in the `env_passthrough` of {what} is not an environment variable name"),
                )
                .help("use letters, digits and `_`, not starting with a digit, e.g. `env_passthrough: [HF_TOKEN]`"));
        }
        if crate::foundation::secrets::is_ci_credential(k) && !acknowledged.iter().any(|a| a == k) {
            return Err(ctx
                .err(
                    n,
                    format!("`{k}` in the `env_passthrough` of {what} is a credential of the CI job: the program under test (the pull request's code) would receive it"),
                )
                .help(format!("remove it; if the program really needs it, acknowledge it with a second key beside this one: `env_passthrough_ci_credentials: [{k}]`")));
        }
        Ok(k.to_owned())
    };
    match &node.kind {
        Kind::Seq(items) => items.iter().map(one).collect(),
        _ => Ok(vec![one(node)?]),
    }
}

/// `env_passthrough_ci_credentials`: the CI credentials `env_passthrough` may name; one name or a
/// list, each also in `env_passthrough`.
pub(super) fn ci_credentials_acknowledged(ctx: &Ctx<'_>, node: &Node, what: &str) -> Result<Vec<String>> {
    let one = |n: &Node| -> Result<String> {
        Ok(ctx
            .non_empty_text(
                n,
                &format!("a name in the `env_passthrough_ci_credentials` of {what}"),
            )?
            .to_owned())
    };
    match &node.kind {
        Kind::Seq(items) => items.iter().map(one).collect(),
        _ => Ok(vec![one(node)?]),
    }
}
