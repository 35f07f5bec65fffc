//! `{param}` placeholders in command arguments.
//!
//! `{name}` is replaced by the size's value for `name`; `{{` and `}}` write a literal `{` and `}`;
//! a lone `}` is kept as is. Anything else after `{` is an error, so a typo never reaches argv.

use super::model::Size;

/// One piece of a parsed argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    Text(String),
    Param(String),
}

/// Split an argument into text and placeholders.
///
/// # Errors
/// A message (lowercase fragment) for an unclosed `{` or a placeholder that is not a parameter name.
pub(crate) fn parse(arg: &str) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut chars = arg.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '{' if chars.peek().map(|(_, c)| *c) == Some('{') => {
                chars.next();
                text.push('{');
            }
            '{' => {
                let rest = &arg[i + 1..];
                let Some(end) = rest.find('}') else {
                    return Err(format!(
                        "unclosed `{{` in `{arg}`; write `{{{{` for a literal brace"
                    ));
                };
                let name = &rest[..end];
                if !is_param_name(name) {
                    return Err(format!(
                        "`{{{name}}}` in `{arg}` is not a placeholder: a parameter name is a letter or `_` followed by letters, digits or `_`; write `{{{{` for a literal brace"
                    ));
                }
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                pieces.push(Piece::Param(name.to_owned()));
                // Skip the name and the closing brace.
                for _ in 0..=name.chars().count() {
                    chars.next();
                }
            }
            '}' if chars.peek().map(|(_, c)| *c) == Some('}') => {
                chars.next();
                text.push('}');
            }
            other => text.push(other),
        }
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

/// Parameter names: `[A-Za-z_][A-Za-z0-9_]*`.
pub(crate) fn is_param_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The placeholders an argument uses, in order.
pub(crate) fn params(pieces: &[Piece]) -> impl Iterator<Item = &str> {
    pieces.iter().filter_map(|p| match p {
        Piece::Param(n) => Some(n.as_str()),
        Piece::Text(_) => None,
    })
}

/// Fill one argument's placeholders from a size.
///
/// # Errors
/// A message for a malformed argument or a placeholder the size has no value for. Neither can
/// happen for a command of a loaded spec: `spec::load` checks every argument against every size.
pub fn render(arg: &str, size: &Size) -> Result<String, String> {
    let mut out = String::new();
    for piece in parse(arg)? {
        match piece {
            Piece::Text(t) => out.push_str(&t),
            Piece::Param(name) => match size.get(&name) {
                Some(v) => out.push_str(v),
                None => {
                    return Err(format!(
                        "placeholder `{{{name}}}` has no value in size `{}`",
                        size.key()
                    ));
                }
            },
        }
    }
    Ok(out)
}

/// Fill a whole command (argv) from a size.
///
/// # Errors
/// As [`render`].
pub fn render_command(command: &[String], size: &Size) -> Result<Vec<String>, String> {
    command.iter().map(|a| render(a, size)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(p: &[(&str, &str)]) -> Size {
        Size {
            params: p.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect(),
        }
    }

    #[test]
    fn placeholders_and_escapes() {
        let s = size(&[("n", "4096"), ("dtype", "f16")]);
        assert_eq!(render("--n={n}", &s).unwrap(), "--n=4096");
        assert_eq!(render("{n}x{n}", &s).unwrap(), "4096x4096");
        assert_eq!(render("{{n}}", &s).unwrap(), "{n}");
        assert_eq!(render("{{{n}}}", &s).unwrap(), "{4096}");
        assert_eq!(render("a}b", &s).unwrap(), "a}b");
        assert_eq!(render("ünï{dtype}é", &s).unwrap(), "ünïf16é");
        assert_eq!(
            render_command(&["./bin".into(), "{dtype}".into()], &s).unwrap(),
            vec!["./bin", "f16"]
        );
    }

    #[test]
    fn malformed_placeholders_are_errors() {
        let s = size(&[("n", "1")]);
        assert!(render("{n", &s).unwrap_err().contains("unclosed"));
        assert!(render("{}", &s).unwrap_err().contains("not a placeholder"));
        assert!(render("{1x}", &s).unwrap_err().contains("not a placeholder"));
        assert!(render("{a b}", &s).unwrap_err().contains("not a placeholder"));
        assert_eq!(
            render("{m}", &s).unwrap_err(),
            "placeholder `{m}` has no value in size `n=1`"
        );
    }

    #[test]
    fn params_lists_placeholders_in_order() {
        let p = parse("{m}x{n}-{m}").unwrap();
        assert_eq!(params(&p).collect::<Vec<_>>(), vec!["m", "n", "m"]);
    }
}
