//! Issue 38: every `match` over `ThresholdKind` names each kind, so that a new kind is a compile
//! error wherever a kind decides something (a wildcard arm once read a new kind as a relative
//! threshold of 0). The compiler checks exhaustiveness; this check keeps wildcard arms, `if let`,
//! `let ... else` and `matches!` over the kinds from coming back. Text, not a Rust parser: the
//! code is rustfmt'd, so each arm starts its own line.

/// The places in `text` (a file's code, comments removed) that decide on some threshold kinds
/// and let the others fall through, as `line: text`.
fn partial_matches(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        // `if let ThresholdKind::X = ..`, `let ThresholdKind::X { .. } = .. else`: one kind
        // decides, every other falls through.
        let single = (t.contains("if let ") || (t.starts_with("let ") && t.contains(" else")))
            && t.split(" = ")
                .next()
                .is_some_and(|p| p.contains("ThresholdKind::"));
        if single {
            found.push(format!("{}: {t}", i + 1));
        }
        // A match whose arms name kinds, and one of them is `_ =>`.
        if t.contains("match ") && t.ends_with('{') {
            let arms = arms_of(&lines, i + 1);
            let over_kinds = arms.iter().any(|(_, a)| {
                a.trim_start_matches("| ")
                    .split(['(', ' '])
                    .next()
                    .is_some_and(|p| p.contains("ThresholdKind::"))
            });
            for (n, a) in arms {
                if over_kinds && a.starts_with("_ =>") {
                    found.push(format!("{}: {a}", n + 1));
                }
            }
        }
    }
    // `matches!(k, ThresholdKind::X)`, over as many lines as rustfmt gives it.
    for (at, _) in text.match_indices("matches!(") {
        let mut depth = 0;
        let inner: String = text[at + "matches!".len()..]
            .chars()
            .take_while(|c| {
                depth += match c {
                    '(' => 1,
                    ')' => -1,
                    _ => 0,
                };
                depth > 0
            })
            .collect();
        if inner.contains("ThresholdKind::") {
            let n = text[..at].matches('\n').count() + 1;
            found.push(format!("{n}: {}", lines[n - 1].trim()));
        }
    }
    found
}

/// The lines of the arms of the match that opens on the line before `start`: those at the
/// indentation of its first line, up to its closing brace.
fn arms_of<'a>(lines: &[&'a str], start: usize) -> Vec<(usize, &'a str)> {
    let indent_of = |l: &str| l.len() - l.trim_start().len();
    let indent = lines[start..]
        .iter()
        .find(|l| !l.trim().is_empty())
        .map_or(0, |l| indent_of(l));
    let mut arms = Vec::new();
    for (n, l) in lines.iter().enumerate().skip(start) {
        if !l.trim().is_empty() && indent_of(l) < indent {
            break;
        }
        if indent_of(l) == indent {
            arms.push((n, l.trim()));
        }
    }
    arms
}

#[test]
fn the_check_finds_each_way_a_kind_can_fall_through() {
    let planted = "fn f(t: &Threshold) -> f64 {
    let a = match t.kind {
        ThresholdKind::Relative { fraction } => fraction,
        _ => 0.0,
    };
    if let ThresholdKind::Exact = t.kind {
        return 1.0;
    }
    let ThresholdKind::Min { value } = t.kind else {
        return 2.0;
    };
    let b = matches!(
        t.kind,
        ThresholdKind::Max { .. }
    );
    a + value
}
";
    let found = partial_matches(planted);
    assert_eq!(found.len(), 4, "{found:#?}");
    for (n, what) in [
        (4, "_ =>"),
        (6, "if let"),
        (9, "let ThresholdKind"),
        (12, "matches!"),
    ] {
        assert!(
            found
                .iter()
                .any(|f| f.starts_with(&format!("{n}: ")) && f.contains(what)),
            "line {n} ({what}) not found: {found:#?}"
        );
    }
    // Exhaustive matches, guards, and a wildcard over something else pass.
    let fine = "fn g(t: &Threshold, n: &Node) -> f64 {
    let a = match t.kind {
        _ if t.min_effect.is_some() => 1.0,
        ThresholdKind::Relative { fraction } => fraction,
        ThresholdKind::Exact | ThresholdKind::Min { .. } | ThresholdKind::Max { .. } => 0.0,
    };
    let k = match &n.kind {
        Kind::Scalar(s) if s.is_true() => ThresholdKind::Exact,
        _ => ThresholdKind::Relative { fraction: 0.0 },
    };
    if t.kind == ThresholdKind::Exact { a } else { 0.0 }
}
";
    assert_eq!(partial_matches(fine), Vec::<String>::new());
}

#[test]
fn every_match_over_threshold_kinds_names_each_kind() {
    // Every crate's sources: the command layer's `src/` and each `crates/*/src/`.
    let root = super::architecture::repo();
    let mut dirs = vec![root.join("src")];
    for e in std::fs::read_dir(root.join("crates")).unwrap() {
        dirs.push(e.unwrap().path().join("src"));
    }
    let mut found = Vec::new();
    for src in &dirs {
        let mut files = Vec::new();
        super::architecture::rust_files(src, &mut files);
        for f in &files {
            let rel = f.strip_prefix(&root).unwrap().display().to_string();
            let in_src = f.strip_prefix(src).unwrap().display().to_string();
            let text = super::architecture::without_tests(&in_src, &std::fs::read_to_string(f).unwrap());
            for p in partial_matches(&text) {
                found.push(format!("{rel}:{p}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "name every ThresholdKind (no `_ =>`, `if let`, `let .. else` or `matches!`), so that a new kind is a compile error here: {found:#?}"
    );
}
