//! Typed access to the YAML tree, with errors that name the file, line, column and key.

use std::path::Path;

use super::error::SpecError;
use super::yaml::{Kind, Mark, Node, Typed};

/// Decoding context: the spec file, for every error; and, when the caller collects them, the
/// errors of independent parts (a target, a metric) kept so that one run reports them all.
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub path: &'a Path,
    pub deferred: Option<&'a std::cell::RefCell<Vec<SpecError>>>,
}

pub(crate) type Result<T> = std::result::Result<T, SpecError>;

impl Ctx<'_> {
    /// The result of one independent part: with a collector, an error is kept for the end and
    /// the part is skipped (`Ok(None)`); without one it is returned.
    pub fn keep<T>(&self, r: Result<T>) -> Result<Option<T>> {
        match (r, self.deferred) {
            (Ok(v), _) => Ok(Some(v)),
            (Err(e), Some(errors)) => {
                errors.borrow_mut().push(e);
                Ok(None)
            }
            (Err(e), None) => Err(e),
        }
    }

    pub fn err_at(&self, mark: Mark, message: impl Into<String>) -> SpecError {
        SpecError::new(self.path, message).at(mark.line, mark.column)
    }

    pub fn err(&self, node: &Node, message: impl Into<String>) -> SpecError {
        self.err_at(node.mark, message)
    }

    /// A mapping's entries, with unknown and duplicate keys refused.
    pub fn fields<'n>(&self, node: &'n Node, what: &str, allowed: &[&'static str]) -> Result<Fields<'n>> {
        let Kind::Map(entries) = &node.kind else {
            return Err(self.err(
                node,
                format!("{what} must be a mapping, found {}", describe(node)),
            ));
        };
        let mut out: Vec<(&'n str, &'n Node, &'n Node)> = Vec::with_capacity(entries.len());
        for (k, v) in entries {
            let key = self.key(k, what)?;
            // With a collector, an unknown or repeated key is kept for the end and the rest of
            // the mapping still read: three typos are three errors of one run.
            if !allowed.contains(&key) {
                self.keep::<()>(Err(unknown_key(self, k, key, what, allowed)))?;
                // Read on as if the suggested key had been written (`comand` as `command`), when
                // the mapping does not have it: its value is still checked, and a missing
                // `command` is not reported a second time. The error above stands (exit 2).
                let written = |name: &str| {
                    entries
                        .iter()
                        .any(|(k2, _)| matches!(&k2.kind, Kind::Scalar(s) if s.text == name))
                };
                if let Some(meant) = did_you_mean(key, allowed)
                    && !written(meant)
                {
                    out.push((meant, k, v));
                }
                continue;
            }
            if let Some((_, first, _)) = out.iter().find(|(name, _, _)| *name == key) {
                let e = self
                    .err(k, format!("duplicate key `{key}` in {what}"))
                    .help(format!("`{key}` is already set on line {}", first.mark.line));
                self.keep::<()>(Err(e))?;
                continue;
            }
            out.push((key, k, v));
        }
        Ok(Fields { entries: out })
    }

    /// A mapping with free-form keys (env, metrics, size parameters), duplicates refused.
    pub fn entries<'n>(&self, node: &'n Node, what: &str) -> Result<Vec<(&'n str, &'n Node, &'n Node)>> {
        let Kind::Map(entries) = &node.kind else {
            return Err(self.err(
                node,
                format!("{what} must be a mapping, found {}", describe(node)),
            ));
        };
        let mut out: Vec<(&'n str, &'n Node, &'n Node)> = Vec::with_capacity(entries.len());
        // Looked up by hash, not by a scan of `out`: a mapping of 100,000 keys (metrics) took
        // 13 s to check when each key was compared with every earlier one.
        let mut seen: std::collections::HashMap<&'n str, &'n Node> =
            std::collections::HashMap::with_capacity(entries.len());
        for (k, v) in entries {
            let key = self.key(k, what)?;
            if let Some(first) = seen.insert(key, k) {
                return Err(self
                    .err(k, format!("duplicate key `{key}` in {what}"))
                    .help(format!("`{key}` is already set on line {}", first.mark.line)));
            }
            out.push((key, k, v));
        }
        Ok(out)
    }

    fn key<'n>(&self, k: &'n Node, what: &str) -> Result<&'n str> {
        match &k.kind {
            Kind::Scalar(s) => match s.typed() {
                Typed::Null => Err(self.err(k, format!("empty key in {what}"))),
                _ => Ok(s.text.as_str()),
            },
            _ => Err(self.err(
                k,
                format!("keys in {what} must be plain text, found {}", describe(k)),
            )),
        }
    }

    pub fn seq<'n>(&self, node: &'n Node, what: &str) -> Result<&'n [Node]> {
        match &node.kind {
            Kind::Seq(items) => Ok(items),
            _ => Err(self.err(node, format!("{what} must be a list, found {}", describe(node)))),
        }
    }

    /// Any scalar but null, as written (`5` stays `"5"`). For argv, env values, names.
    pub fn text<'n>(&self, node: &'n Node, what: &str) -> Result<&'n str> {
        match &node.kind {
            Kind::Scalar(s) if s.typed() != Typed::Null => Ok(s.text.as_str()),
            _ => Err(self.err(node, format!("{what} must be text, found {}", describe(node)))),
        }
    }

    /// Text that is not empty.
    pub fn non_empty_text<'n>(&self, node: &'n Node, what: &str) -> Result<&'n str> {
        let t = self.text(node, what)?;
        if t.trim().is_empty() {
            return Err(self.err(node, format!("{what} is empty")));
        }
        Ok(t)
    }

    /// A non-negative integer that fits `T`.
    pub fn uint<T: TryFrom<i128>>(&self, node: &Node, what: &str) -> Result<T> {
        match scalar(node) {
            Some(Typed::Int(i)) if i >= 0 => {
                T::try_from(i).map_err(|_| self.err(node, format!("{what} is too large: {i}")))
            }
            _ => Err(self.err(
                node,
                format!("{what} must be a whole number >= 0, found {}", describe(node)),
            )),
        }
    }

    /// A finite number.
    pub fn number(&self, node: &Node, what: &str) -> Result<f64> {
        match scalar(node) {
            #[expect(clippy::cast_precision_loss, reason = "spec numbers are far below 2^52")]
            Some(Typed::Int(i)) => Ok(i as f64),
            Some(Typed::Float(f)) if f.is_finite() => Ok(f),
            _ => Err(self.err(node, format!("{what} must be a number, found {}", describe(node)))),
        }
    }

    /// One of a fixed set of words.
    pub fn choice<'c>(&self, node: &Node, what: &str, choices: &[&'c str]) -> Result<&'c str> {
        let found = match &node.kind {
            Kind::Scalar(s) => choices.iter().find(|c| **c == s.text),
            _ => None,
        };
        found.copied().ok_or_else(|| {
            self.err(
                node,
                format!(
                    "{what} must be one of {}, found {}",
                    list(choices),
                    describe(node)
                ),
            )
        })
    }
}

fn scalar(node: &Node) -> Option<Typed<'_>> {
    match &node.kind {
        Kind::Scalar(s) => Some(s.typed()),
        _ => None,
    }
}

/// The checked entries of a mapping with a fixed set of keys.
pub(crate) struct Fields<'n> {
    /// (key, key node, value node) in file order.
    pub entries: Vec<(&'n str, &'n Node, &'n Node)>,
}

impl<'n> Fields<'n> {
    pub fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, _, v)| *v)
    }

    pub fn key_node(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, k, _)| *k)
    }
}

fn unknown_key(ctx: &Ctx<'_>, node: &Node, key: &str, what: &str, allowed: &[&str]) -> SpecError {
    let mut e = ctx.err(node, format!("unknown key `{key}` in {what}"));
    e = match did_you_mean(key, allowed) {
        Some(s) => e.help(format!("did you mean `{s}`? allowed keys: {}", list(allowed))),
        None if key == "<<" => e.help(format!(
            "yaml merge keys are not supported; use `defaults:` for shared settings. allowed keys: {}",
            list(allowed)
        )),
        None => e.help(format!("allowed keys: {}", list(allowed))),
    };
    e
}

/// The closest allowed word, when it is close enough to be a likely typo.
pub(crate) fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (strsim::jaro_winkler(word, c), *c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// `a`, `b` or `c`.
pub(crate) fn list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("`{i}`")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// What a node is, for "expected X, found Y" messages.
pub(crate) fn describe(node: &Node) -> String {
    match &node.kind {
        Kind::Seq(_) => "a list".to_owned(),
        Kind::Map(_) => "a mapping".to_owned(),
        Kind::Scalar(s) => match s.typed() {
            Typed::Null => "an empty value".to_owned(),
            Typed::Bool(b) => format!("`{b}`"),
            Typed::Int(_) | Typed::Float(_) => format!("the number `{}`", s.text),
            Typed::Str(t) => format!("`{}`", truncate(t)),
        },
    }
}

fn truncate(t: &str) -> String {
    const MAX: usize = 60;
    if t.chars().count() <= MAX {
        t.to_owned()
    } else {
        let head: String = t.chars().take(MAX).collect();
        format!("{head}...")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::yaml::parse;

    fn ctx() -> Ctx<'static> {
        Ctx {
            path: Path::new("s.yaml"),
            deferred: None,
        }
    }

    #[test]
    fn unknown_keys_suggest_the_closest() {
        let n = parse("repetiton: 3\n").unwrap().unwrap();
        let e = ctx()
            .fields(&n, "target `a`", &["name", "repetitions", "metrics"])
            .err()
            .unwrap();
        assert_eq!((e.line, e.column), (Some(1), Some(1)));
        assert_eq!(e.message, "unknown key `repetiton` in target `a`");
        assert!(e.help.unwrap().starts_with("did you mean `repetitions`?"));
        assert_eq!(did_you_mean("zzz", &["name", "metrics"]), None);
    }

    #[test]
    fn duplicate_keys_point_at_the_second() {
        let n = parse("name: a\nname: b\n").unwrap().unwrap();
        let e = ctx().fields(&n, "target", &["name"]).err().unwrap();
        assert_eq!(e.line, Some(2));
        assert!(e.help.unwrap().contains("line 1"));
    }

    #[test]
    #[expect(clippy::float_cmp, reason = "the values compared are exactly representable")]
    fn scalars_convert_with_clear_errors() {
        let n = parse("[5, -1, x, 1.5, 99999999999]").unwrap().unwrap();
        let Kind::Seq(items) = &n.kind else { panic!() };
        assert_eq!(ctx().uint::<u32>(&items[0], "`repetitions`").unwrap(), 5);
        let e = ctx().uint::<u32>(&items[1], "`repetitions`").unwrap_err();
        assert!(e.message.contains("whole number >= 0, found the number `-1`"));
        assert!(
            ctx()
                .uint::<u32>(&items[4], "`repetitions`")
                .unwrap_err()
                .message
                .contains("too large")
        );
        assert_eq!(ctx().number(&items[3], "`alpha`").unwrap(), 1.5);
        assert!(ctx().number(&items[2], "`alpha`").is_err());
        assert_eq!(ctx().text(&items[0], "arg").unwrap(), "5");
    }

    #[test]
    fn lists_read_naturally() {
        assert_eq!(list(&["a"]), "`a`");
        assert_eq!(list(&["a", "b", "c"]), "`a`, `b` or `c`");
    }
}
