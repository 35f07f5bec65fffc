//! A YAML tree where every node knows where it was written.
//!
//! The spec is decoded by hand from this tree rather than through serde: every error, including
//! the semantic ones (a bad regex in `targets[2].kernel`), can then point at the exact node, and
//! errors for "either this shape or that shape" fields (thresholds, sizes, clocks) say what was
//! wrong instead of serde's "data did not match any variant". One parser (saphyr-parser, which
//! reports spans) reads the file, so positions can never disagree with what was decoded.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span, Tag};

/// A 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mark {
    pub line: usize,
    pub column: usize,
}

impl Mark {
    fn from_span(span: Span) -> Self {
        // saphyr's lines are 1-based and its columns 0-based.
        Self {
            line: span.start.line().max(1),
            column: span.start.col() + 1,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub kind: Kind,
    pub mark: Mark,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    Scalar(Scalar),
    Seq(Vec<Node>),
    /// Entries in file order; duplicate keys are caught by the decoder, which knows the context.
    Map(Vec<(Node, Node)>),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scalar {
    pub text: String,
    /// Plain (unquoted, not a block scalar): only these are typed as numbers, booleans and null.
    pub plain: bool,
}

/// The type a scalar resolves to under the YAML 1.2 core schema.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Typed<'a> {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(&'a str),
}

impl Scalar {
    /// Resolve a plain scalar to null, a boolean, an integer or a float; everything else is text.
    pub fn typed(&self) -> Typed<'_> {
        if !self.plain {
            return Typed::Str(&self.text);
        }
        let t = self.text.as_str();
        match t {
            "" | "~" | "null" | "Null" | "NULL" => return Typed::Null,
            "true" | "True" | "TRUE" => return Typed::Bool(true),
            "false" | "False" | "FALSE" => return Typed::Bool(false),
            ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
                return Typed::Float(f64::INFINITY);
            }
            "-.inf" | "-.Inf" | "-.INF" => return Typed::Float(f64::NEG_INFINITY),
            ".nan" | ".NaN" | ".NAN" => return Typed::Float(f64::NAN),
            _ => {}
        }
        if let Some(i) = parse_int(t) {
            return Typed::Int(i);
        }
        if is_float(t)
            && let Ok(f) = t.parse::<f64>()
        {
            return Typed::Float(f);
        }
        Typed::Str(t)
    }
}

fn parse_int(t: &str) -> Option<i128> {
    if let Some(hex) = t.strip_prefix("0x") {
        return i128::from_str_radix(hex, 16).ok();
    }
    if let Some(oct) = t.strip_prefix("0o") {
        return i128::from_str_radix(oct, 8).ok();
    }
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

/// The core schema's float pattern: `[-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?`.
fn is_float(t: &str) -> bool {
    let t = t.strip_prefix(['-', '+']).unwrap_or(t);
    let (mantissa, exponent) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let (int, frac) = match mantissa.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (mantissa, None),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match frac {
        None => !int.is_empty() && digits(int),
        Some(f) => digits(int) && digits(f) && !(int.is_empty() && f.is_empty()),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    mantissa_ok && exponent_ok
}

/// A YAML error with its position (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct YamlError {
    pub mark: Mark,
    pub message: String,
}

/// Aliases may copy nodes; past this many nodes the document is refused (a "billion laughs" file
/// would otherwise expand exponentially in memory).
const MAX_NODES: usize = 1_000_000;

/// Aliases may copy text too: a 2 MB spec aliasing a 1 MB scalar 200,000 times holds 200 GB once
/// expanded, in only 200,000 nodes. Past this many bytes of scalar text in the expanded document
/// (four times the largest spec file read, `fsutil::limits::SPEC`) the document is refused,
/// before the copy is made.
const MAX_TEXT_BYTES: usize = 64 << 20;

/// Deepest nesting of sequences and mappings accepted: a spec needs about 6; the limit keeps every
/// recursive walk of the tree (and its drop) far from the stack's end.
pub(crate) const MAX_DEPTH: usize = 64;

/// Parse one YAML document. `Ok(None)` for an empty file (or one with only comments).
pub(crate) fn parse(text: &str) -> Result<Option<Node>, YamlError> {
    let mut parser = Parser::new_from_str(text);
    let mut b = Builder::default();
    while let Some(ev) = parser.next_event() {
        let (event, span) = ev.map_err(|e| YamlError {
            mark: Mark {
                line: e.marker().line().max(1),
                column: e.marker().col() + 1,
            },
            message: format!("invalid yaml: {}", e.info()),
        })?;
        b.event(event, span)?;
    }
    Ok(b.root)
}

#[derive(Default)]
struct Builder {
    /// Open collections: the node being filled and its anchor id (0 = none).
    stack: Vec<(Node, usize)>,
    /// A mapping key waiting for its value, per open mapping (parallel to `stack`).
    pending_keys: Vec<Option<Node>>,
    anchors: HashMap<usize, Node>,
    root: Option<Node>,
    documents: usize,
    nodes: usize,
    /// Bytes of scalar text in the document as expanded so far.
    text_bytes: usize,
    aliases_used: bool,
}

impl Builder {
    fn event(&mut self, event: Event<'_>, span: Span) -> Result<(), YamlError> {
        let mark = Mark::from_span(span);
        match event {
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err(YamlError {
                        mark,
                        message: "the spec must be a single yaml document, found a second one".to_owned(),
                    });
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                if let Some(tag) = &tag {
                    let is_str = tag.is_yaml_core_schema() && tag.suffix == "str";
                    if !is_str {
                        return Err(YamlError {
                            mark,
                            message: format!(
                                "yaml tag `{}` is not supported; remove it (quote the value to make it a string)",
                                tag_name(tag)
                            ),
                        });
                    }
                }
                let text_len = text.len();
                let node = Node {
                    kind: Kind::Scalar(Scalar {
                        text: text.into_owned(),
                        plain: style == ScalarStyle::Plain && tag.is_none(),
                    }),
                    mark,
                };
                self.add_text(text_len, mark)?;
                self.finish(node, anchor, 1)?;
            }
            Event::SequenceStart(anchor, ref tag) | Event::MappingStart(anchor, ref tag) => {
                if let Some(tag) = tag {
                    return Err(YamlError {
                        mark,
                        message: format!("yaml tag `{}` is not supported; remove it", tag_name(tag)),
                    });
                }
                if self.stack.len() >= MAX_DEPTH {
                    return Err(YamlError {
                        mark,
                        message: format!(
                            "the document nests more than {MAX_DEPTH} levels of lists and mappings; a spec needs a handful"
                        ),
                    });
                }
                let kind = if matches!(event, Event::SequenceStart(..)) {
                    Kind::Seq(Vec::new())
                } else {
                    Kind::Map(Vec::new())
                };
                self.stack.push((Node { kind, mark }, anchor));
                self.pending_keys.push(None);
            }
            Event::SequenceEnd | Event::MappingEnd => {
                self.pending_keys.pop();
                if let Some((node, anchor)) = self.stack.pop() {
                    // Its children were counted as they were finished.
                    self.finish(node, anchor, 1)?;
                }
            }
            Event::Alias(id) => {
                self.aliases_used = true;
                let Some((copied, bytes)) = self.anchors.get(&id).map(count) else {
                    return Err(YamlError {
                        mark,
                        message: "alias to an unknown anchor".to_owned(),
                    });
                };
                // An alias copies the whole anchored node: that is what costs memory. Its nodes
                // and text are counted, and the budget checked, before the copy is made.
                if self.nodes.saturating_add(copied) <= MAX_NODES {
                    self.add_text(bytes, mark)?;
                }
                let Some(node) = self.anchors.get(&id).cloned() else {
                    return Ok(());
                };
                self.finish(node, 0, copied)?;
            }
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => {}
        }
        Ok(())
    }

    /// Count `bytes` more of scalar text; past [`MAX_TEXT_BYTES`] the document is refused.
    fn add_text(&mut self, bytes: usize, mark: Mark) -> Result<(), YamlError> {
        self.text_bytes = self.text_bytes.saturating_add(bytes);
        if self.text_bytes > MAX_TEXT_BYTES {
            return Err(YamlError {
                mark,
                message: if self.aliases_used {
                    format!(
                        "the document expands to more than {} MB of text through its aliases (`*name`); a spec needs far less",
                        MAX_TEXT_BYTES >> 20
                    )
                } else {
                    format!("the document holds more than {} MB of text", MAX_TEXT_BYTES >> 20)
                },
            });
        }
        Ok(())
    }

    /// Attach a completed node to its parent (or make it the root).
    fn finish(&mut self, node: Node, anchor: usize, added: usize) -> Result<(), YamlError> {
        self.nodes = self.nodes.saturating_add(added);
        if self.nodes > MAX_NODES {
            return Err(YamlError {
                mark: node.mark,
                message: if self.aliases_used {
                    format!(
                        "the document expands to more than {MAX_NODES} nodes through its aliases (`*name`); a spec needs far fewer"
                    )
                } else {
                    format!("the document has more than {MAX_NODES} nodes; a spec needs far fewer")
                },
            });
        }
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
        let Some((parent, _)) = self.stack.last_mut() else {
            self.root = Some(node);
            return Ok(());
        };
        match &mut parent.kind {
            Kind::Seq(items) => items.push(node),
            Kind::Map(entries) => {
                let slot = self.pending_keys.last_mut();
                match slot {
                    Some(slot @ None) => *slot = Some(node),
                    Some(slot) => {
                        if let Some(key) = slot.take() {
                            entries.push((key, node));
                        }
                    }
                    None => {}
                }
            }
            Kind::Scalar(_) => {}
        }
        Ok(())
    }
}

/// A tag as it is usually written (`!!map`, `!local`), not in its resolved form.
fn tag_name(tag: &Tag) -> String {
    if tag.is_yaml_core_schema() {
        format!("!!{}", tag.suffix)
    } else {
        format!("{}{}", tag.handle, tag.suffix)
    }
}

/// The nodes of `node` and the bytes of its scalar text.
fn count(node: &Node) -> (usize, usize) {
    let add = |(n, b): (usize, usize), (n2, b2): (usize, usize)| (n + n2, b.saturating_add(b2));
    match &node.kind {
        Kind::Scalar(s) => (1, s.text.len()),
        Kind::Seq(items) => items.iter().map(count).fold((1, 0), add),
        Kind::Map(entries) => entries
            .iter()
            .map(|(k, v)| add(count(k), count(v)))
            .fold((1, 0), add),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(text: &str) -> Node {
        parse(text).unwrap().unwrap()
    }

    #[test]
    fn marks_are_one_based_and_point_at_values() {
        let n = root("a: 1\nb:\n  - x\n  - {c: d}\n");
        let Kind::Map(entries) = &n.kind else { panic!() };
        assert_eq!(entries[0].0.mark, Mark { line: 1, column: 1 });
        assert_eq!(entries[0].1.mark, Mark { line: 1, column: 4 });
        let Kind::Seq(items) = &entries[1].1.kind else {
            panic!()
        };
        assert_eq!(items[0].mark, Mark { line: 3, column: 5 });
        assert_eq!(items[1].mark, Mark { line: 4, column: 5 });
    }

    #[test]
    fn core_schema_typing() {
        let s = |t: &str, plain| Scalar {
            text: t.into(),
            plain,
        };
        assert_eq!(s("5", true).typed(), Typed::Int(5));
        assert_eq!(s("-0x1", true).typed(), Typed::Str("-0x1"));
        assert_eq!(s("0x10", true).typed(), Typed::Int(16));
        assert_eq!(s("5", false).typed(), Typed::Str("5"));
        assert_eq!(s("1.5e3", true).typed(), Typed::Float(1500.0));
        assert_eq!(s(".5", true).typed(), Typed::Float(0.5));
        assert_eq!(s("1e", true).typed(), Typed::Str("1e"));
        assert_eq!(s(".", true).typed(), Typed::Str("."));
        assert_eq!(s("~", true).typed(), Typed::Null);
        assert_eq!(s("", true).typed(), Typed::Null);
        assert_eq!(s("True", true).typed(), Typed::Bool(true));
        assert_eq!(s("yes", true).typed(), Typed::Str("yes"));
        assert_eq!(s("3%", true).typed(), Typed::Str("3%"));
    }

    #[test]
    fn aliases_copy_the_anchored_node() {
        let n = root("a: &x [1, 2]\nb: *x\n");
        let Kind::Map(entries) = &n.kind else { panic!() };
        assert_eq!(entries[0].1.kind, entries[1].1.kind);
    }

    #[test]
    fn alias_bombs_are_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..8 {
            let prev = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
            ));
        }
        let e = parse(&text).unwrap_err();
        assert!(e.message.contains("more than"), "{}", e.message);
    }

    #[test]
    fn aliases_of_a_long_scalar_are_refused_by_their_text_before_they_are_copied() {
        let mut text = format!("a: &big \"{}\"\nb: [", "x".repeat(1 << 20));
        for _ in 0..200 {
            text.push_str("*big, ");
        }
        text.push_str("]\n");
        let e = parse(&text).unwrap_err();
        assert!(
            e.message.contains("MB of text through its aliases"),
            "{}",
            e.message
        );
        // 60 copies fit.
        let ok = text.replacen(&"*big, ".repeat(200), &"*big, ".repeat(60), 1);
        assert!(parse(&ok).is_ok());
    }

    #[test]
    fn syntax_errors_have_positions() {
        let e = parse("a: [1, 2\nb: 3\n").unwrap_err();
        assert!(e.message.starts_with("invalid yaml:"), "{}", e.message);
        assert!(e.mark.line >= 1);
        let e = parse("a: 1\n---\nb: 2\n").unwrap_err();
        assert_eq!(e.mark.line, 2);
        assert!(e.message.contains("single yaml document"));
    }

    #[test]
    fn tags_other_than_str_are_refused() {
        assert!(parse("a: !!str 5\n").is_ok());
        let n = root("a: !!str 5\n");
        let Kind::Map(entries) = &n.kind else { panic!() };
        let Kind::Scalar(s) = &entries[0].1.kind else {
            panic!()
        };
        assert_eq!(s.typed(), Typed::Str("5"));
        assert!(parse("a: !custom 5\n").is_err());
    }

    #[test]
    fn empty_documents_have_no_root() {
        assert_eq!(parse("").unwrap(), None);
        assert_eq!(parse("# only a comment\n").unwrap(), None);
    }
}
